/** The running svc version; kept in step with package.json by a test. */
export const SVC_VERSION = "0.20.0";
