/**
 * `svc-mail/kit`: what a plugin or a storage driver is written with, built-ins
 * and users' alike. It never loads the server itself, so a plugin that
 * svc loads can import it without a cycle.
 */
export { definePlugin, type SvcContext, type SvcPlugin, type SvcServices, type Teardown } from './contract/plugin.js'
export { needTogether } from './config/resolve.js'
export { ConfigError, type SvcConfig, type SvcOptions } from './contract/plugin.js'
export { defineOptions, flagName, type DeclaredOption, type OptionSpec, type OptionType, type OptionValues } from './config/options.js'
export { unknownFlags } from './cli/args.js'
export { renderHelp, type HelpPage } from './cli/help.js'
export { DURATION_FORMAT, parseDuration } from './config/duration.js'
export type { Arrivals, IncomingArrival } from './contract/arrival.js'
export { SmtpReplyError, type MailArrival, type MailOrigin, type MailReading, type MailRejection, type MailRemoval, type MailRoute, type RejectionReason, type ServerInfo, type SmtpSession, type SvcHookable, type SvcHooks } from './contract/hooks.js'
export type { GuardRejection, HttpShell, RequestGuard, ShellRouteMeta } from './contract/http.js'
export { PROBE_PATHS } from './http/probes.js'
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
  type AttachmentContent,
  type InboxCounts,
  type InboxInfo,
  type IncomingMail,
  type KeptMail,
  type ListQuery,
  type Listing,
  type PageQuery,
  type SearchListQuery,
  type SortOrder,
  type StorageCapabilities,
  type StorageChange,
  type StorageDriver,
  type StorageDriverFactory,
  type StorageDriverOptions,
} from './storage/driver.js'
export { MailNotFoundError, noEmailWithId, type FoundAttachment, type MailStore } from './contract/store.js'
export { createId, notAMessage, parseEmail, readAttachment, RECORD_VERSION, type ParseInput } from './mail/parse.js'
export { extractLinks, parseMail, type ParseMailInput } from './mail/pool.js'
export { attachmentNames, boundSummary, formatSize, inlineCount, recordedFields, SUMMARY_LIMITS, toEmail, toSearchText, toSummary } from './mail/format.js'
export { bareContentId, inlineContentIds, markInline, referencedContentIds } from './mail/content-id.js'
export { LINK_LIMITS, LINKS_TRUNCATED_HEADER, type LinkList, type LinkOptions, type MailLink } from './mail/links.js'
export { parseSearch, formatSearch, parseSearchDate, parseSearchSize, searchBoundsProblem, SearchBoundsError, SEARCH_LIMITS } from './search/parse.js'
export type { SearchField, SearchQuery, SearchTerm } from './contract/search.js'
export { filterSearch, type SearchFilter } from './search/filter.js'
export { compileSearch, hiddenRecipients, matchesSearch, searchTarget, type CompileSearchOptions, type SearchMatcher, type SearchTarget } from './search/match.js'
export { packageRoot, packageVersion } from './paths.js'
export { hostPort, localAddresses } from './address.js'
export { coalesced } from './coalesce.js'
export { timeSlice } from './slice.js'
export { clientKey, createAdmission, type Admission, type ConnectionLimits, type Decision, type Refusal } from './connections.js'
export { createLoginThrottle, safeEqual, type LoginThrottle, type LoginThrottleOptions } from './login.js'
export type { Address, Attachment, BulkDeleteResult, Email, EmailBody, EmailSummary, EmailUpdate, Envelope, SummaryPage } from './contract/types.js'
