/** The pair page's HTML: a shell; web/page.ts pairs, then runs the dashboard in `#dashboard`. */
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc pair</title>
<link rel="icon" href="favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="dashboard/style.css">
<style>
body { font: 15px/1.4 system-ui, sans-serif; margin: 2rem auto; max-width: 72rem; padding: 0 1rem; color: #1a1a1a; background: #fff; }
h1 { font-size: 1.3rem; } code { font-size: 0.9em; }
#status[data-state="error"] { color: #b00020; } #status[data-state="connected"] { color: #0a6b2c; }
#status[data-state="reconnecting"] { color: #8a4b00; }
</style>
</head>
<body>
<header>
<h1>svc pair</h1>
<p id="status" role="status" data-state="starting">Reading the offer…</p>
<p id="daemon"></p>
</header>
<main id="dashboard"></main>
<script type="module" src="web/page.js"></script>
</body>
</html>
`;
