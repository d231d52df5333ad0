/**
 * `svc-mcp`: the MCP server of svc over stdio, for agents that start their
 * tools as processes. It talks to a running svc over its REST API, so that
 * instance needs no `--mcp`. stdout carries protocol messages only; every
 * other line goes to stderr.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { parseArgs, type ArgsDef } from 'citty'
import { inboxName, INBOX_NAME_RULE } from 'svc-mail/kit'
import { renderHelp, unknownFlags, type HelpPage } from 'svc-mail/kit/cli'
import { packageVersion } from 'svc-mail/kit/runtime'
import { createRestSources, splitCredentials } from './rest-source.js'
import { createMcpServer } from './server.js'

export const DEFAULT_API_URL = 'http://localhost:1080'

const args = {
  url: {
    type: 'string',
    alias: 'u',
    valueHint: 'url',
    description: `The svc instance as a browser opens it, with its base pathname (not the /api root); user:pass@ in it is sent as HTTP Basic; env SVC_API_URL; default ${DEFAULT_API_URL}`,
  },
  'api-key': {
    type: 'string',
    alias: 'k',
    valueHint: 'key',
    description: 'Sent as "Authorization: Bearer <key>" when the instance requires it; env SVC_API_KEY',
  },
  inbox: {
    type: 'string',
    valueHint: 'name',
    description: 'The inbox of tools that name none (see svc_list_inboxes); env SVC_INBOX; default default',
  },
  version: { type: 'boolean', description: 'Print the version' },
  help: { type: 'boolean', alias: 'h', description: 'Show this help' },
} satisfies ArgsDef

/** The same 80-column plain help as `svc --help`. */
const help: HelpPage = {
  usage: 'svc-mcp',
  description: `MCP server over stdio for a running svc instance (svc-mcp ${packageVersion}). SVC_WEB_URL sets the base of deep links (default: the url).`,
  args,
}

export interface SvcMcpOptions {
  url: string
  apiKey?: string
  /** Base of the deep links; the url when absent. */
  webUrl?: string
  /** The inbox of tools that name none; `default` when absent. */
  inbox?: string
}

/**
 * Serves MCP on stdin/stdout until stdin closes. Credentials in `url` are
 * used, never shown: not in the start-up line, not in deep links.
 */
export async function serveStdio({ url, apiKey, webUrl = url, inbox }: SvcMcpOptions): Promise<void> {
  // Only the transport may write to stdout: anything a library logs goes to stderr instead.
  console.log = console.info = console.debug = console.error
  const server = createMcpServer({ sources: createRestSources({ url, apiKey }), inbox, webUrl: splitCredentials(webUrl).url })
  await server.connect(new StdioServerTransport())
  console.error(`svc-mcp ${packageVersion}: MCP over stdio for the svc at ${splitCredentials(url).url}`)
}

/** Entry of the `svc-mcp` binary; exits 2 on a bad option, as `svc` does. */
export async function runSvcMcp(rawArgs = process.argv.slice(2), env = process.env): Promise<void> {
  const parsed = parseArgs(rawArgs, args)
  if (parsed.help) return void console.log(renderHelp(help))
  if (parsed.version) return void console.log(packageVersion)
  // citty's parsed types collapse string options to never; read them as what they are.
  const given = (name: keyof typeof args) => {
    const value: unknown = parsed[name]
    return typeof value === 'string' && value !== '' ? value : undefined
  }
  const url = (given('url') ?? env.SVC_API_URL ?? DEFAULT_API_URL).replace(/\/+$/, '')
  const inboxGiven = given('inbox') ?? (env.SVC_INBOX || undefined)
  const inbox = inboxGiven === undefined ? undefined : inboxName(inboxGiven)
  const problems = [
    ...(inboxGiven !== undefined && !inbox ? [`--inbox: ${JSON.stringify(inboxGiven)} is not an inbox name: ${INBOX_NAME_RULE}`] : []),
    ...unknownFlags(rawArgs, args).map((flag) => `unknown option ${flag} (see svc-mcp --help)`),
    ...parsed._.map((word) => `unexpected argument "${word}" (see svc-mcp --help)`),
    ...(isHttpUrl(url) ? [] : [`--url must be an http(s) URL such as ${DEFAULT_API_URL}, not "${splitCredentials(url).url}"`]),
  ]
  if (problems.length > 0) {
    for (const problem of problems) console.error(`svc-mcp: ${problem}`)
    process.exit(2)
  }
  await serveStdio({ url, apiKey: given('api-key') ?? env.SVC_API_KEY, webUrl: env.SVC_WEB_URL || undefined, inbox })
}

function isHttpUrl(value: string): boolean {
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol)
  } catch {
    return false
  }
}
