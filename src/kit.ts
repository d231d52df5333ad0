/**
 * `svc-mail/kit`: the core a plugin or a storage driver is written with,
 * built-ins and users' alike: definePlugin, defineOptions,
 * defineStorageDriver, the hooks, the records and the contract's types. It
 * never loads the server itself, so a plugin that svc loads can import it
 * without a cycle. Helpers live in entry points of their own beside it:
 * `svc-mail/kit/mail` (the record), `svc-mail/kit/search` (the search
 * syntax), `svc-mail/kit/http` (web requests and clients),
 * `svc-mail/kit/cli` (commands and option values) and
 * `svc-mail/kit/runtime` (the package, work over the event loop).
 */
export { definePlugin, type SvcContext, type SvcPlugin, type SvcServices, type Teardown } from './contract/plugin.js'
export { needTogether } from './config/resolve.js'
export { ConfigError, type SvcConfig, type SvcOptions } from './contract/plugin.js'
export { defineOptions, flagName, type DeclaredOption, type OptionSpec, type OptionType, type OptionValues } from './config/options.js'
export type { Arrivals, IncomingArrival } from './contract/arrival.js'
export { SmtpReplyError, type MailArrival, type MailOrigin, type MailReading, type MailRejection, type MailRemoval, type MailRoute, type RejectionReason, type ServerInfo, type SmtpSession, type SvcHookable, type SvcHooks } from './contract/hooks.js'
export type { GuardRejection, HttpShell, RequestGuard, ShellRouteMeta } from './contract/http.js'
export type { ApiMethod, ApiResponse, ApiRouteMeta } from './http/route-doc.js'
export type { InboxAccess, SmtpIntake, SmtpIntakeEvents } from './contract/smtp.js'
export { DEFAULT_INBOX, INBOX_NAME_RULE, inboxName, inboxNameSchema } from './inbox.js'
export {
  defineStorageDriver,
  storageScheme,
  InvalidRequestError,
  StorageUnavailableError,
  SUMMARY_LIMIT_DEFAULT,
  SUMMARY_LIMIT_MAX,
  BYTE_CHUNK,
  type AttachmentContent,
  type ByteRange,
  type ByteStream,
  type InboxCounts,
  type InboxInfo,
  type IncomingMail,
  type KeptMail,
  type ListQuery,
  type Listing,
  type PageQuery,
  type SearchListQuery,
  type SerializedListing,
  type SortOrder,
  type StorageCapabilities,
  type StorageChange,
  type StorageDriver,
  type StorageDriverFactory,
  type StorageDriverOptions,
} from './storage/driver.js'
export { MailNotFoundError, noEmailWithId, type FoundAttachment, type MailStore, type StreamedAttachment } from './contract/store.js'
export type { SearchField, SearchQuery, SearchTerm } from './contract/search.js'
export type { Address, Attachment, BulkDeleteResult, Email, EmailBody, EmailSummary, EmailUpdate, Envelope, SummaryPage } from './contract/types.js'
