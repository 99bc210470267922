/**
 * The console's security headers: the local server sends them with every console file, and the
 * CloudFront distribution's response-headers policy (lib/console.ts) sets the same.
 * Also the names of the headers the distribution adds to what it forwards to the Platform API.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export const CONSOLE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'cross-origin-opener-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=()',
};

/** The header the console's CloudFront distribution sends the browser's address in (lib/console.ts). */
export const VIEWER_ADDRESS_HEADER = 'x-viewer-address';
/** The header its origin sends CONSOLE_ORIGIN_VERIFY in: the request came through the distribution. */
export const ORIGIN_VERIFY_HEADER = 'x-origin-verify';
