/**
 * `svc-mail/kit/mail`: helpers for the Email record: parsing a message into
 * it (on svc's parser threads with parseMail), its summary and search text,
 * the parts it shows inline, the links it holds.
 */
export { createId, notAMessage, parseEmail, readAttachment, RECORD_VERSION, type ParseInput } from '../mail/parse.js'
export { extractLinks, parseMail, type ParseMailInput } from '../mail/pool.js'
export { attachmentNames, boundSummary, formatSize, inlineCount, recordedFields, SUMMARY_LIMITS, summaryJson, toEmail, toSearchText, toSummary } from '../mail/format.js'
export { bareContentId, markInline, referencedContentIds, splitAtContentIds, type InlinePiece } from '../mail/content-id.js'
export { LINK_LIMITS, LINKS_TRUNCATED_HEADER, type LinkList, type LinkOptions, type MailLink } from '../mail/links.js'
