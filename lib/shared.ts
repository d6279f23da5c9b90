// edgepay/shared: the one module besides the public API (`lib/index.ts`) that the gateway
// Worker may import from lib/. It holds the pieces the SDK, the sandbox and the gateway
// must agree on byte for byte (reading a JSON request body, Retry-After, request ids, the
// request schemas' building blocks), so each rule is written once. It is not a package entry
// point: users of the SDK never need it. Each name is documented once, where it is defined
// (the file named in its `from`); the comments here only say who uses each group.

// Encoding digests as hex (the gateway's request fingerprints).
export { bytesToHex } from './internal/hex.ts';
// Reading a JSON request body (gateway proxy, webhook ingress, admin API; the sandbox too).
export {
  BodyRejectedError,
  checkBodySize,
  /** @internal The gateway's tests build a body over this limit. */
  DEFAULT_MAX_BODY_BYTES,
  parseJsonBody,
  readBody,
  readCapped,
  readJsonBody,
  requestIssues,
} from './internal/json-body.ts';
// Masking email addresses and account numbers (the SDK's errors and hooks, the gateway's logs).
export { redactPersonalData } from './internal/redact.ts';
// Request ids (the SDK, the sandbox and the gateway).
export { REQUEST_ID_HEADER, resolveRequestId } from './internal/request-id.ts';
// Retry-After (the SDK's retries, the relay's delivery schedule).
export { parseRetryAfter } from './internal/retry-after.ts';
// Comparing secrets (the gateway's token and secret checks).
export { timingSafeEqual } from './internal/timing-safe-equal.ts';
// Aborting a wait (the SDK's transport and retry delays, the gateway's upstream calls).
export { untilAborted } from './internal/until-aborted.ts';
// The request schemas' building blocks, which the gateway's OpenAPI document describes by
// the same rules (decimal amounts, references, dates).
export { DECIMAL_AMOUNT, MAX_AMOUNT_MINOR, MINOR_PER_MAJOR, MINOR_UNIT_DIGITS } from './money.ts';
// The response schemas and the envelope readers of the SDK (the gateway's OpenAPI document
// publishes the records the SDK reads, in the variants it reads them from).
export { BankSchema, ResolvedAccountSchema } from './responses/banks.ts';
export { OptionalMetadata, OptionalText, ResponseAmount } from './responses/common.ts';
export {
  ActivationChallengeSchema,
  DebitSchema,
  MandateSchema,
  MandateStateSchema,
} from './responses/direct-debits.ts';
export { itemsOf } from './responses/envelope.ts';
export { PaymentSchema, PaymentSessionSchema } from './responses/payments.ts';
export { RefundCountsSchema, RefundSchema } from './responses/refunds.ts';
export { TransferSchema } from './responses/transfers.ts';
export {
  VirtualAccountSchema,
  VirtualAccountTransactionSchema,
} from './responses/virtual-accounts.ts';
export {
  AccountNumberSchema,
  AmountSchema,
  BankCodeSchema,
  CurrencySchema,
  DateSchema,
  DateTimeSchema,
  EmailSchema,
  HttpUrlSchema,
  MetadataSchema,
  PageQuerySchema,
  PageSizeQuerySchema,
  ReferenceSchema,
} from './schemas/common.ts';
export { DATE_TIME } from './schemas/dates.ts';
// The webhook envelope schemas (the gateway's event-type catalog publishes their `data`).
export { GenericEventSchema, KnownEventSchema } from './webhooks.ts';
