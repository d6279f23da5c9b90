// The gateway's request ids follow the one rule of lib/shared.ts (the SDK and the sandbox
// use it too): the caller's `X-Request-Id` when it is 1 to 128 visible ASCII characters,
// else a fresh UUID, echoed on every response and sent upstream, so one id finds a
// request in the gateway's logs and in the upstream's. Re-exported for the gateway
// modules that import it from here.
export { REQUEST_ID_HEADER, resolveRequestId } from '../../lib/shared.ts';
