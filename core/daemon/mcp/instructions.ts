/** The `instructions` the MCP server gives an agent at initialize / server/discover: what svc is for. */
export const SVC_MCP_INSTRUCTIONS = [
  "svc is a local agent daemon: it watches code hosts and other sources for events and routes them to agents.",
  "Sentinels (sentinel_watch, sentinel_list, sentinel_unwatch) watch event subjects such as a GitHub repository or pull request and deliver matching events into an agent session or, as signed webhooks, to an HTTPS callback.",
  "Sessions (start_agent_session, session_list, session_recap, message_*) are the agents svc runs and lets you message.",
  "Clients that want events without knowing svc use the events extension (events/list, events/subscribe, events/poll, events/unsubscribe) when the server advertises it.",
  "config_get and config_set read and change the daemon's configuration; model_roles names the models each role uses.",
].join(" ");
