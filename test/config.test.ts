import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { knownPlugins, loadSvcConfig } from '../src/builtins.js'
import { optionDefaults, optionTable } from '../src/config/options.js'
import { layers, resolveConfig as resolveWith, type ConfigLayer } from '../src/config/resolve.js'
import { ConfigError } from '../src/contract/plugin.js'

/** The configuration of these layers with the built-in plugins' options. */
const resolveConfig = (stack: ConfigLayer[]) => resolveWith(stack, [], knownPlugins([]))
const allOptions = optionTable(knownPlugins([]))
import { Svc } from '../src/index.js'
import { problemsOf } from './support/config.js'

const folder = () => mkdtempSync(join(tmpdir(), 'svc-config-'))

describe('precedence: flag > environment > file > default', () => {
  it('takes each option from the highest layer that sets it', async () => {
    const cwd = folder()
    writeFileSync(join(cwd, 'svc.config.json'), JSON.stringify({ smtp: 1111, web: 2222, maxEmails: 5 }))
    const { config, configFile } = await loadSvcConfig({
      cwd,
      env: { SVC_SMTP_PORT: '3333', SVC_WEB_PORT: '4444' },
      flags: { smtp: '5555' },
    })
    expect(configFile).toBe(join(cwd, 'svc.config.json'))
    expect(config.smtp).toBe(5555) // flag over environment and file
    expect(config.web).toBe(4444) // environment over file
    expect(config.maxEmails).toBe(5) // file over default
    expect(config.ip).toBe('0.0.0.0') // default
  })

  it('loads a TypeScript config file that imports defineConfig from svc', async () => {
    const cwd = folder()
    writeFileSync(
      join(cwd, 'custom.config.ts'),
      `import { defineConfig } from 'svc-mail'\nconst port: number = 2626\nexport default defineConfig({ smtp: port, mcp: true })\n`,
    )
    const { config } = await loadSvcConfig({ cwd, env: {}, configFile: 'custom.config.ts' })
    expect(config.smtp).toBe(2626)
    expect(config.mcp).toBe(true)
  })

  it('reads .svcrc', async () => {
    const cwd = folder()
    writeFileSync(join(cwd, '.svcrc'), 'web=8025\nmaxEmails=10\n')
    const { config } = await loadSvcConfig({ cwd, env: {} })
    expect(config.web).toBe(8025)
    expect(config.maxEmails).toBe(10)
  })

  it('refuses a --config file that does not exist', async () => {
    await expect(loadSvcConfig({ cwd: folder(), env: {}, configFile: 'missing.config.ts' })).rejects.toBeInstanceOf(ConfigError)
  })
})

describe('environment', () => {
  it('configures every option that has a variable', () => {
    const config = resolveConfig([
      layers.env({
        SVC_SMTP_PORT: '2525',
        SVC_WEB_PORT: '8080',
        SVC_IP: '127.0.0.1',
        SVC_WEB_IP: '127.0.0.2',
        SVC_BASE_PATHNAME: 'mail/',
        SVC_MAX_EMAILS: '100',
        SVC_MAX_MESSAGE_SIZE: '0',
        SVC_MCP: 'true',
        SVC_WEB_USER: 'u',
        SVC_WEB_PASS: 'p',
        SVC_API_KEY: 'k',
        SVC_OUTGOING_HOST: 'smtp.example.com',
        SVC_OUTGOING_PORT: '587',
        SVC_OUTGOING_SECURE: 'yes',
        SVC_AUTO_RELAY: 'qa@example.com',
        SVC_VERBOSE: '1',
      }),
    ])
    expect(config).toMatchObject({
      smtp: 2525,
      web: 8080,
      ip: '127.0.0.1',
      webIp: '127.0.0.2',
      basePathname: '/mail',
      maxEmails: 100,
      maxMessageSize: 0,
      mcp: true,
      webUser: 'u',
      webPass: 'p',
      apiKey: 'k',
      outgoingHost: 'smtp.example.com',
      outgoingPort: 587,
      outgoingSecure: true,
      autoRelay: 'qa@example.com',
      verbose: true,
    })
  })

  it('ignores the variables removed in 3.0', () => {
    const config = resolveConfig([layers.env({ SVC_HIDE_EXTENSIONS: 'STARTTLS', SVC_INCOMING_CERT: '/x.pem', SVC_INCOMING_KEY: '/y.pem' })])
    expect(config.hideExtensions).toEqual([])
    expect(config.incomingCert).toBe('')
    expect(config.incomingKey).toBe('')
  })

  it('names the variable in a problem', () => {
    expect(problemsOf(() => resolveConfig([layers.env({ SVC_WEB_PORT: 'http' })]))).toEqual([
      'SVC_WEB_PORT: "http" is not a port (0-65535)',
    ])
  })
})

describe('validation', () => {
  it('lists every bad value at once', () => {
    const problems = problemsOf(() =>
      resolveConfig([
        layers.flags({
          smtp: '70000',
          maxEmails: '-3',
          mcp: 'maybe',
          hideExtensions: 'STARTTLS,BOGUS',
          incomingCert: '/no/such/cert.pem',
          incomingKey: '/no/such/key.pem',
        }),
      ]),
    )
    expect(problems).toEqual([
      '--smtp: "70000" is not a port (0-65535)',
      '--max-emails: "-3" is not a whole number >= 0',
      '--mcp: "maybe" is not true or false',
      '--hide-extensions: unknown BOGUS (one of STARTTLS, PIPELINING, 8BITMIME, SMTPUTF8)',
      '--incoming-cert: cannot read file /no/such/cert.pem',
      '--incoming-key: cannot read file /no/such/key.pem',
    ])
  })

  it('wants options that only work together', () => {
    expect(problemsOf(() => resolveConfig([layers.flags({ webUser: 'me', autoRelay: '' })]))).toEqual([
      '--web-user needs --web-pass',
      '--auto-relay needs --outgoing-host',
    ])
  })

  it('wants a spamd address and a time to wait for it that make sense', () => {
    expect(problemsOf(() => resolveConfig([layers.flags({ spamassassin: 'localhost', spamassassinTimeout: '0' })]))).toEqual([
      '--spamassassin: "localhost" is not host:port, e.g. 127.0.0.1:783',
      '--spamassassin-timeout must be at least 1 (ms)',
    ])
    expect(problemsOf(() => resolveConfig([layers.env({ SVC_SPAMASSASSIN_TIMEOUT: '2s' })]))).toEqual(['SVC_SPAMASSASSIN_TIMEOUT: "2s" is not a whole number >= 0'])
  })

  it('rejects an unknown key in a config file or in new Svc()', () => {
    expect(problemsOf(() => new Svc({ smpt: 25 } as never))).toEqual(['smpt in options: unknown option "smpt"'])
  })

  it('has a default for every option', () => {
    expect(Object.keys(optionDefaults(allOptions))).toEqual([...allOptions.keys()])
    expect(optionDefaults(allOptions)).toMatchObject({ smtp: 1025, web: 1080, webIp: '0.0.0.0', maxMessageSize: 50 * 1024 * 1024, maxEmails: 0 })
  })
})
