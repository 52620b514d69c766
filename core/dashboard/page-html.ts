/**
 * The dashboard's HTML shell on loopback: landmarks and a mount point; web/main.js does the work.
 * `modules` are preloaded (one round of requests instead of a waterfall of imports).
 */
export const pageHtml = (modules: readonly string[]) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>svc dashboard</title>
<link rel="icon" href="/ui/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/ui/style.css">
${modules.map((m) => `<link rel="modulepreload" href="/ui/web/${m}.js">`).join("\n")}
<script type="module" src="/ui/web/main.js"></script>
</head>
<body>
<a class="skip" href="#main">Skip to the dashboard</a>
<header class="top"><h1><img src="/ui/favicon.svg" alt="" width="24" height="24"> svc dashboard</h1></header>
<main id="main" tabindex="-1"><div id="app"><p role="status">Loading…</p></div></main>
</body>
</html>
`;

/** The favicon: the letters "svc" on a dark tile. */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1f3a5f"/><text x="16" y="21" font-family="system-ui,sans-serif" font-size="12" font-weight="700" fill="#ffffff" text-anchor="middle">svc</text></svg>
`;
