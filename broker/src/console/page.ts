/**
 * The console's HTML shell: no inline script or style (the page's CSP allows
 * only the gateway's own files), the bundle does the rest.
 */
export function consolePage(version: string): string {
  const v = encodeURIComponent(version);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Warren console</title>
<link rel="icon" href="/console/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/console/assets/app.css?v=${v}">
<script src="/console/assets/app.js?v=${v}" defer></script>
</head>
<body>
<div id="app"><noscript>The Warren console needs JavaScript.</noscript></div>
</body>
</html>
`;
}

/** Served when the bundle was never built (a checkout without `npm ci`/`npm run build:console`). */
export const notBuiltPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Warren console: not built</title></head>
<body><h1>The Warren console is not built</h1>
<p>Run <code>npm run build:console</code> (or <code>npm ci</code>, which runs it) in the repository and reload.</p></body></html>
`;
