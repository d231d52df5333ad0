import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { GetPromptResult } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'

const ask = (description: string, text: string): GetPromptResult => ({
  description,
  messages: [{ role: 'user', content: { type: 'text', text } }],
})

const CONTEXT = 'svc is the development mail catcher that holds every email the application under test sent; use its svc_* tools.'

/** The prompts that pull one link out of a message sent to an address. */
const LINK_PROMPTS = [
  {
    name: 'verify-signup-email',
    title: 'Verify a signup email',
    description: 'Find the signup message for an address and extract the verification link',
    email: 'The address the account was registered with, e.g. alice@example.com',
    kind: 'signup',
    about: 'signing up, welcoming, or verifying, confirming or activating an account',
    what: 'verification link',
  },
  {
    name: 'check-password-reset',
    title: 'Check a password reset email',
    description: 'Find the reset message for an address and extract the reset URL',
    email: 'The address a password reset was requested for, e.g. alice@example.com',
    kind: 'password reset',
    about: 'resetting or changing a password',
    what: 'reset URL',
  },
] as const

const extractLink = (email: string, { kind, about, what }: (typeof LINK_PROMPTS)[number]) =>
  [
    CONTEXT,
    '',
    `Goal: find the ${kind} email sent to ${email} and extract its ${what}.`,
    '',
    `1. Call svc_search_emails with {"to": ${JSON.stringify(email)}}. Among the results (newest first), pick the newest whose subject or preview is about ${about}. If nothing matches yet, the mail may still be on its way: call svc_wait_for_email with {"to": ${JSON.stringify(email)}, "timeout": 30000}, which answers as soon as one arrives.`,
    `2. Call svc_extract_links with that message's id to list its links, and pick the ${what} (svc_get_email reads the bodies when the link text says too little).`,
    `3. Give the ${what} exactly as listed. Note any one-time code and any expiry the message states.`,
    `4. Answer with: the subject, the sender, the time received, the ${what}, any code, and the message's svc inbox link. If no such email arrived, say so plainly and list what did arrive for ${email}.`,
  ].join('\n')

/** The four workflow prompts. Arguments are strings, as MCP prompts require. */
export function registerPrompts(server: McpServer): void {
  for (const prompt of LINK_PROMPTS) {
    server.registerPrompt(
      prompt.name,
      { title: prompt.title, description: prompt.description, argsSchema: { email: z.string().min(1).describe(prompt.email) } },
      ({ email }) => ask(`Find the ${prompt.kind} email for ${email} and extract its ${prompt.what}`, extractLink(email, prompt)),
    )
  }

  server.registerPrompt(
    'analyze-email-content',
    {
      title: 'Analyze an email',
      description: 'Review a message\'s structure, links and rendering',
      argsSchema: { emailId: z.string().min(1).describe('The message id, or the word "latest" for the newest message') },
    },
    ({ emailId }) => {
      const latest = emailId.trim().toLowerCase() === 'latest'
      const fetch = latest
        ? 'Call svc_get_latest_email (count 1) to read the newest message.'
        : `Call svc_get_email with {"id": ${JSON.stringify(emailId)}}.`
      return ask(
        `Analyze ${latest ? 'the newest email' : `email ${emailId}`}: structure, links, rendering`,
        [
          CONTEXT,
          '',
          `1. ${fetch}`,
          '2. Structure: From, Reply-To, To, Subject, Date and Message-ID headers; whether both an HTML and a plain-text body exist and say the same; attachments and inline (cid:) images and whether each is referenced.',
          '3. Links: list every link with its text; flag links to localhost, staging or other non-production hosts, plain http, broken or empty hrefs, and tracking parameters; check for an unsubscribe link where one belongs.',
          '4. Rendering: HTML that email clients handle badly (scripts, forms, external stylesheets, CSS in <style> only, images without alt text or size, very wide layouts), and text that reads badly in the plain-text body.',
          '5. Answer with a short summary, then the findings ordered by severity, each with what to change; end with the message\'s svc inbox link.',
        ].join('\n'),
      )
    },
  )

  server.registerPrompt(
    'monitor-email-delivery',
    {
      title: 'Monitor an email delivery',
      description: 'Wait for and confirm a delivery',
      argsSchema: {
        to: z.string().min(1).describe('The recipient address the email is expected for'),
        subject: z.string().optional().describe('Part of the expected subject; leave out to accept any subject'),
      },
    },
    ({ to, subject }) => {
      const started = new Date().toISOString()
      const filters = { to, ...(subject ? { subject } : {}), since: started }
      const expected = subject ? `an email to ${to} with a subject containing "${subject}"` : `an email to ${to}`
      return ask(`Wait for and confirm delivery of ${expected}`, [
        CONTEXT,
        '',
        `Goal: confirm that ${expected} is delivered. Monitoring started at ${started}.`,
        '',
        `1. Call svc_wait_for_email with ${JSON.stringify({ ...filters, timeout: 60_000 })}: it answers as soon as a match arrives, or with an error after 60 seconds. Drop "since" if a delivery just before ${started} also counts.`,
        '2. If it timed out, call svc_search_emails with the same "to" to see what did arrive.',
        '3. When it arrives, call svc_get_email with its id and check: the recipients include the address, the subject, the sender, that the body is not empty, and the attachments if any were expected.',
        '4. Answer "delivered" with the time received, subject, sender and the message\'s svc inbox link, or "not delivered" with what arrived for that address instead.',
      ].join('\n'))
    },
  )
}
