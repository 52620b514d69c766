/**
 * The dashboard's style sheet. Colours meet WCAG 2.1 AA: text at least 4.5:1 against its
 * background (#1b1f24 on #ffffff 16:1, #4a5360 on #ffffff 7.7:1, badge text on its tint ≥ 5:1),
 * and every focusable control shows a 3 px outline when focused by keyboard.
 */
export const PAGE_CSS = `
:root { color-scheme: light; --fg: #1b1f24; --muted: #4a5360; --line: #c9d1d9; --bg: #ffffff; --panel: #f4f6f8;
  --accent: #1f3a5f; --focus: #0b5cad; --bad: #a4161a; --good: #1a6b33; --warn: #7a4a00; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
.skip { position: absolute; left: -999px; top: 0; background: var(--accent); color: #fff; padding: .5rem 1rem; }
.skip:focus { left: 0; }
.top { background: var(--accent); color: #fff; padding: .6rem 1.2rem; }
.top h1 { margin: 0; font-size: 1.15rem; display: flex; align-items: center; gap: .5rem; }
main { padding: 1rem 1.2rem 3rem; max-width: 72rem; margin: 0 auto; }
main:focus { outline: none; }
h2 { font-size: 1.2rem; margin: 1rem 0 .5rem; } h3 { font-size: 1rem; margin: 1rem 0 .3rem; }
.where, .meta, .id { color: var(--muted); }
.status { padding: .4rem .6rem; background: var(--panel); border-left: 4px solid var(--good); }
.status[data-state="error"] { border-left-color: var(--bad); color: var(--bad); }
.tabs { display: flex; flex-wrap: wrap; gap: .3rem; margin: .8rem 0; border-bottom: 1px solid var(--line); }
.tab { font: inherit; background: var(--panel); color: var(--fg); border: 1px solid var(--line); border-bottom: none;
  padding: .45rem .9rem; border-radius: 6px 6px 0 0; cursor: pointer; }
.tab[aria-current="page"] { background: var(--accent); color: #fff; border-color: var(--accent); }
.tab .count { display: inline-block; min-width: 1.6em; padding: 0 .35em; border-radius: 1em; background: #fff; color: var(--fg); font-size: .85em; text-align: center; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
button, input, textarea { font: inherit; }
button { background: var(--accent); color: #fff; border: 1px solid var(--accent); border-radius: 5px; padding: .35rem .8rem; cursor: pointer; }
button.danger { background: var(--bad); border-color: var(--bad); }
button:disabled { background: #5f6b78; border-color: #5f6b78; cursor: default; }
.rows { list-style: none; margin: 0; padding: 0; }
.rows > li { border: 1px solid var(--line); border-radius: 6px; margin: .3rem 0; background: #fff; }
summary { padding: .45rem .7rem; cursor: pointer; display: flex; flex-wrap: wrap; gap: .2rem 1rem; align-items: baseline; }
summary .name { font-weight: 600; }
.body { padding: .2rem .9rem .8rem; border-top: 1px solid var(--line); }
.transcript { list-style: none; padding: 0; margin: .5rem 0; max-height: 22rem; overflow: auto; }
.msg { padding: .3rem .5rem; margin: .2rem 0; border-radius: 5px; white-space: pre-wrap; }
.msg.user { background: #e8eef6; } .msg.agent { background: var(--panel); }
.role { font-weight: 600; }
.controls { display: flex; flex-wrap: wrap; gap: .6rem; align-items: flex-end; }
.prompt { display: flex; flex-wrap: wrap; gap: .4rem; align-items: flex-end; flex: 1 1 24rem; }
.prompt label { width: 100%; font-weight: 600; }
.prompt textarea { flex: 1 1 18rem; min-height: 2.6rem; border: 1px solid #6b7683; border-radius: 5px; padding: .35rem; }
.filter { display: flex; gap: .6rem; align-items: center; } .filter input { border: 1px solid #6b7683; border-radius: 5px; padding: .3rem .5rem; min-width: 18rem; }
table { border-collapse: collapse; width: 100%; margin: .4rem 0; }
caption { text-align: left; color: var(--muted); padding: .2rem 0; }
th, td { text-align: left; padding: .3rem .6rem .3rem 0; border-bottom: 1px solid var(--line); vertical-align: top; }
code { font-size: .9em; overflow-wrap: anywhere; }
.badge { display: inline-block; padding: 0 .45em; border-radius: 4px; font-size: .85em; background: var(--panel); color: var(--fg); border: 1px solid var(--line); }
.badge.dead, .badge.failed, .badge.attention, .badge.orphaned, .badge.missing { background: #fde8e8; color: var(--bad); border-color: #f2b8b8; }
.badge.delivered, .badge.succeeded, .badge.loaded, .badge.live { background: #e6f4ea; color: var(--good); border-color: #b7dfc2; }
.badge.pending, .badge.running { background: #fff4db; color: var(--warn); border-color: #f0d79a; }
.error { color: var(--bad); } .empty { color: var(--muted); }
.login { max-width: 36rem; margin: 3rem auto; padding: 1rem 1.4rem; border: 1px solid var(--line); border-radius: 8px; background: var(--panel); }
[hidden] { display: none !important; }
`;
