/**
 * svc's favicon, shared by the two servers of the dashboard page (the daemon's loopback page and
 * `svc pair page`): an SVG served as `/favicon.svg` (and `/favicon.ico`, which browsers ask for
 * on their own), so no page logs a 404 for it.
 */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1f4f8f"/><path d="M21.5 10.5c-1.2-1.3-3-2-5.1-2-3.2 0-5.4 1.7-5.4 4.2 0 5.3 10.2 3.2 10.2 7.7 0 1.9-1.9 3.1-4.6 3.1-2.3 0-4.2-.9-5.3-2.3" fill="none" stroke="#fff" stroke-width="2.6" stroke-linecap="round"/></svg>
`;
