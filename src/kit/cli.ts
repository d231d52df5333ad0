/**
 * `svc-mail/kit/cli`: helpers for a plugin's own command (such as
 * `svc-mcp`) and its option values: the help page, unknown flags named with
 * a suggestion, durations.
 */
export { unknownFlags } from '../cli/args.js'
export { renderHelp, type HelpPage } from '../cli/help.js'
export { DURATION_FORMAT, parseDuration } from '../config/duration.js'
