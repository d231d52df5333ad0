/**
 * `svc-mail/kit/search`: the search syntax of docs/search.md: one parser,
 * its bounds, one matcher, and the named filters (from, to, since...) the
 * REST API, MCP and waiters share.
 */
export { parseSearch, formatSearch, parseSearchDate, parseSearchSize, searchBoundsProblem, SearchBoundsError, SEARCH_LIMITS } from '../search/parse.js'
export { filterSearch, type SearchFilter } from '../search/filter.js'
export { compileSearch, hiddenRecipients, matchesSearch, searchTarget, type CompileSearchOptions, type SearchMatcher, type SearchTarget } from '../search/match.js'
