/** The pair page's HTML: a shell; web/page.ts does the work. */
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc pair</title>
<style>
body { font: 15px/1.4 system-ui, sans-serif; margin: 2rem auto; max-width: 42rem; padding: 0 1rem; }
h1 { font-size: 1.3rem; } code { font-size: 0.9em; }
#status[data-state="error"] { color: #b00020; } #status[data-state="connected"] { color: #0a7d32; }
table { border-collapse: collapse; width: 100%; margin-bottom: 1.5rem; } td, th { text-align: left; padding: 0.2rem 0.6rem 0.2rem 0; border-bottom: 1px solid #ddd; }
</style>
</head>
<body>
<h1>svc pair</h1>
<p id="status" data-state="starting">Reading the offer…</p>
<p id="daemon"></p>
<h2>Sessions</h2>
<table id="sessions"><tbody></tbody></table>
<h2>Sentinels</h2>
<table id="sentinels"><tbody></tbody></table>
<script type="module" src="web/page.js"></script>
</body>
</html>
`;
