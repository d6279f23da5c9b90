/**
 * edgepay: the SDK for the payments API. A {@link PaymentsClient} signs each call with the
 * merchant's key (or sends a gateway's bearer token), validates bodies before they leave
 * and answers after they arrive, retries safely, and pages through lists; webhooks are
 * verified and parsed with {@link parseWebhookEvent}. Runs on Node >= 22, Deno, Bun and
 * Cloudflare Workers (only `fetch`, Web Crypto and valibot).
 *
 * @module edgepay
 */

// Errors
export {
  ActivationNotInitiatedError,
  APIError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  createAPIError,
  DuplicateReferenceError,
  DuplicateRefundError,
  InsufficientFundsError,
  InternalServerError,
  MandateNotActiveError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  UnprocessableEntityError,
} from './api-errors.ts';
// Client
export { ENVIRONMENTS, PaymentsClient, type PaymentsClientOptions } from './client.ts';
// Confirming money webhooks against the service
export {
  type ConfirmableEvent,
  type Confirmation,
  type ConfirmationOutcome,
  confirmWebhookEvent,
} from './confirm.ts';
export { MONEY_EVENTS, type MoneyEventRule, type RecordSearch } from './confirm-rules.ts';
// The endpoint table (docs/endpoints.md)
export {
  type Effect,
  ENDPOINTS,
  type Endpoint,
  type EndpointName,
  type HttpMethod,
  idempotencyOf,
  type Lookup,
  listEndpoints,
  type NamedEndpoint,
  type Shape,
} from './endpoints.ts';
export {
  AbortError,
  ConnectionError,
  type ErrorContext,
  type Issue,
  OutcomeUnknownError,
  PaymentsError,
  RequestValidationError,
  ResponseValidationError,
  type SignatureFailureReason,
  SignatureVerificationError,
  TimeoutError,
} from './errors.ts';
export type { EndpointInput, ListParams, RequestOptions } from './internal/core.ts';
export type { Logger, RequestEvent, ResponseEvent } from './internal/hooks.ts';
export { lookupMismatches } from './internal/lookup.ts';
// Money (exact decimal <-> minor units)
export { formatMinorUnits, parseMinorUnits, toMajorUnits, toMinorUnits } from './money.ts';
// Lists and polling
export { type Page, PagedList, type PageLoader } from './pagination.ts';
export type { WaitOptions } from './polling.ts';
// Resources
export type { Banks } from './resources/banks.ts';
export {
  type DirectDebits,
  type DisburseRequest,
  OpenDisburseRequestSchema,
} from './resources/direct-debits.ts';
export type { Payments } from './resources/payments.ts';
export type { Refunds } from './resources/refunds.ts';
export type { Transfers } from './resources/transfers.ts';
export type { VirtualAccounts } from './resources/virtual-accounts.ts';
// Response shapes (docs/payments-api.md, "Resources")
export type { Bank, ResolvedAccount } from './responses/banks.ts';
export type {
  ActivationChallenge,
  Debit,
  Mandate,
  MandateState,
} from './responses/direct-debits.ts';
export type { Payment, PaymentSession } from './responses/payments.ts';
export type { Refund, RefundCounts } from './responses/refunds.ts';
export type { Transfer } from './responses/transfers.ts';
export type { VirtualAccount, VirtualAccountTransaction } from './responses/virtual-accounts.ts';
// Request schemas and types (shared with the gateway)
export {
  type ListBanksQuery,
  ListBanksQuerySchema,
  type ResolveAccountRequest,
  ResolveAccountRequestSchema,
} from './schemas/banks.ts';
export {
  type CreateMandateRequest,
  CreateMandateRequestSchema,
  type DebitRequest,
  DebitRequestSchema,
  DisburseRequestSchema,
  type ValidateActivationRequest,
  ValidateActivationRequestSchema,
} from './schemas/direct-debits.ts';
export {
  type InitializePaymentRequest,
  InitializePaymentRequestSchema,
  type ListTransactionsQuery,
  ListTransactionsQuerySchema,
} from './schemas/payments.ts';
export {
  type InitializeRefundRequest,
  InitializeRefundRequestSchema,
  type ListRefundsQuery,
  ListRefundsQuerySchema,
} from './schemas/refunds.ts';
export {
  type InitializeTransferRequest,
  InitializeTransferRequestSchema,
  type ListDisbursementsQuery,
  ListDisbursementsQuerySchema,
} from './schemas/transfers.ts';
export {
  type CreateVirtualAccountRequest,
  CreateVirtualAccountRequestSchema,
  type ListVirtualAccountTransactionsQuery,
  ListVirtualAccountTransactionsQuerySchema,
  VirtualAccountByEmailRequestSchema,
} from './schemas/virtual-accounts.ts';
// Request signing (docs/payments-api.md, "Authentication")
export {
  DEFAULT_TOLERANCE_SEC,
  KEY_ID_HEADER,
  type RawBody,
  SIGNATURE_HEADER,
  type SignatureHeaders,
  type SignRequestOptions,
  signRequest,
  TIMESTAMP_HEADER,
  type VerifyRequestSignatureOptions,
  verifyRequestSignature,
} from './signing.ts';
// Webhooks (docs/payments-api.md, "Events")
export {
  type GenericWebhookEvent,
  type KnownWebhookEvent,
  type ParseWebhookOptions,
  parseWebhookEvent,
  parseWebhookEventUnverified,
  type WebhookEvent,
} from './webhooks.ts';
