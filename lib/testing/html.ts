// Minimal, accessible HTML for the hosted checkout page.

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * Escapes text for HTML content and quoted attribute values.
 *
 * @param text - untrusted text.
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char] ?? char);
}

const STYLE = `body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a}
main{border:1px solid #ccc;border-radius:8px;padding:1.5rem}dl{display:grid;grid-template-columns:auto 1fr;gap:.4rem 1rem}
dt{font-weight:600}dd{margin:0}button{font-size:1rem;padding:.6rem 1.2rem;margin-right:.5rem;cursor:pointer}
.pay{background:#0a6b2d;color:#fff;border:0;border-radius:4px}.note{color:#555;font-size:.9rem}`;

/**
 * A complete HTML page response (`text/html; charset=utf-8`).
 *
 * @param title - page title, escaped here.
 * @param bodyHtml - already escaped markup for `<main>`.
 * @param status - HTTP status. @default 200
 */
export function htmlPage(title: string, bodyHtml: string, status = 200): Response {
  const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
${bodyHtml}
</main>
</body>
</html>
`;
  return new Response(page, {
    status,
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
      'Cache-Control': 'no-store',
    },
  });
}
