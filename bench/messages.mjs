// Synthetic mail for the benchmark: a transactional message with a text part,
// the same words as HTML, and a small attachment, as applications send. Words
// come from a seeded generator, so runs are repeatable and bodies compress
// like prose, not like a repeated string.

/** Seeded PRNG (mulberry32): the same messages on every run. */
function random(seed) {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const SYLLABLES = 'ba be bi bo bu da de di do du fa fe fi ka ke ki ko la le li lo lu ma me mi mo na ne ni no pa pe pi po ra re ri ro sa se si so ta te ti to va ve vi vo za ze'.split(' ')

/** 2,000 made-up words of 1 to 4 syllables: a vocabulary about as varied as an e-mail's. */
const VOCABULARY = (() => {
  const next = random(7)
  return Array.from({ length: 2000 }, () => {
    const length = 1 + Math.floor(next() * 4)
    return Array.from({ length }, () => SYLLABLES[Math.floor(next() * SYLLABLES.length)]).join('')
  })
})()

/** The word that only one message of a store carries, for the rare-word search. */
export const RARE_WORD = 'quetzalcoatlus'

function words(next, bytes) {
  let out = ''
  while (out.length < bytes) {
    out += `${VOCABULARY[Math.floor(next() * VOCABULARY.length)]}${next() < 0.08 ? '. ' : ' '}`
  }
  return out.trim()
}

/** Lines of at most 76 characters, as MIME wants for 7bit parts. */
function wrap(text, width = 76) {
  const lines = []
  let line = ''
  for (const word of text.split(' ')) {
    if (line && line.length + word.length + 1 > width) {
      lines.push(line)
      line = word
    } else line = line ? `${line} ${word}` : word
  }
  if (line) lines.push(line)
  return lines.join('\r\n')
}

function base64Lines(bytes) {
  return bytes.toString('base64').replace(/.{76}/g, '$&\r\n').replace(/\r\n$/, '')
}

/**
 * One message of about `size` bytes: a text part, the same paragraphs as
 * HTML, a small CSV attachment. `rare` puts RARE_WORD in the text.
 */
export function buildMessage(n, { size = 3000, rare = false } = {}) {
  const next = random(n + 1)
  const paragraphs = Array.from({ length: 4 }, () => words(next, Math.round((size * 0.96 - 1050) / 8)))
  if (rare) paragraphs[1] += ` ${RARE_WORD}`
  const reference = (n * 7919).toString(36).toUpperCase()
  const text = [`Hello customer ${n},`, ...paragraphs, `Order reference ${reference}`].map((paragraph) => wrap(paragraph)).join('\r\n\r\n')
  const html = [
    '<!doctype html><html><head><meta charset="utf-8"><style>body{font-family:sans-serif}p{margin:0 0 1em}</style></head>',
    `<body><table role="presentation" width="100%"><tr><td><h1>Hello customer ${n},</h1>`,
    ...paragraphs.map((paragraph) => `<p>${paragraph}</p>`),
    `<p class="footer">Order reference <b>${reference}</b></p></td></tr></table></body></html>`,
  ].join('\n')
  const csv = Buffer.from(Array.from({ length: Math.max(4, Math.round(size / 400)) }, (_, i) => `${n},${i},${Math.floor(next() * 1e6)}`).join('\n'))
  const boundary = `b1-${n}`
  const alternative = `b2-${n}`
  return [
    'From: "Shop Notifications" <notifications@shop.example>',
    `To: "Customer ${n}" <customer${n}@example.com>`,
    `Subject: Your order ${n} has shipped`,
    `Message-ID: <bench-${n}@shop.example>`,
    'Date: Mon, 06 May 2024 07:08:09 +0000',
    'MIME-Version: 1.0',
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    `Content-Type: multipart/alternative; boundary="${alternative}"`,
    '',
    `--${alternative}`,
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: 7bit',
    '',
    text,
    `--${alternative}`,
    'Content-Type: text/html; charset=utf-8',
    'Content-Transfer-Encoding: 7bit',
    '',
    wrap(html.replace(/\n/g, ' ')),
    `--${alternative}--`,
    `--${boundary}`,
    `Content-Type: text/csv; name="order-${n}.csv"`,
    `Content-Disposition: attachment; filename="order-${n}.csv"`,
    'Content-Transfer-Encoding: base64',
    '',
    base64Lines(csv),
    `--${boundary}--`,
    '',
  ].join('\r\n')
}

/** A message with one attachment of `bytes` random bytes (base64, so about 4/3 of that on the wire). */
export function buildLargeMessage(bytes) {
  const next = random(99)
  const content = Buffer.alloc(bytes)
  for (let i = 0; i < bytes; i += 4) content.writeUInt32LE(Math.floor(next() * 4294967296), Math.min(i, bytes - 4))
  return [
    'From: sender@example.com',
    'To: inbox@example.com',
    'Subject: A large attachment',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="large"',
    '',
    '--large',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'The attachment is large.',
    '--large',
    'Content-Type: application/octet-stream; name="large.bin"',
    'Content-Disposition: attachment; filename="large.bin"',
    'Content-Transfer-Encoding: base64',
    '',
    base64Lines(content),
    '--large--',
    '',
  ].join('\r\n')
}

/** A message with `count` small attachments (about 4 KB each, different bytes), as a scanner or a report generator sends. */
export function buildManyAttachments(count) {
  const next = random(1234)
  const parts = []
  for (let i = 0; i < count; i++) {
    const content = Buffer.alloc(3000)
    for (let j = 0; j < content.length; j += 4) content.writeUInt32LE(Math.floor(next() * 4294967296), j)
    parts.push(
      '--many',
      `Content-Type: image/jpeg; name="scan-${i}.jpg"`,
      `Content-Disposition: attachment; filename="scan-${i}.jpg"`,
      'Content-Transfer-Encoding: base64',
      '',
      base64Lines(content),
    )
  }
  return [
    'From: scanner@office.example',
    'To: inbox@example.com',
    `Subject: ${count} scanned pages`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="many"',
    '',
    '--many',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'The scanned pages are attached.',
    ...parts,
    '--many--',
    '',
  ].join('\r\n')
}

/**
 * A marketing mail of about `size` bytes of HTML, as email builders write
 * them: nested layout tables, inline styles on every cell, a style sheet
 * with media queries and dark mode, images and links; each `n` its own words.
 */
export function buildMarketingMessage(n, size = 100 * 1024) {
  const next = random(n + 1000)
  const head = [
    '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">',
    '<meta name="color-scheme" content="light dark"><title>Spring sale</title><style>',
    '  body { margin: 0; padding: 0; -webkit-text-size-adjust: 100%; }',
    '  .button a:hover { background-color: #0b5ed7 !important; }',
    '  @media only screen and (max-width: 600px) { .column { display: block !important; width: 100% !important; } .hero img { max-width: 100% !important; height: auto !important; } }',
    '  @media (prefers-color-scheme: dark) { .card { background: #1e1e1e !important; color: #eee !important; } }',
    '</style></head><body style="margin:0;background-color:#f4f4f4">',
    '<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="background-color:#f4f4f4"><tr><td align="center">',
  ].join('\n')
  const rows = []
  let html = head
  for (let i = 0; html.length + rows.join('').length < size - 200; i++) {
    const text = words(next, 300)
    rows.push(
      `<table role="presentation" class="card" width="600" cellpadding="0" cellspacing="0" style="width:600px;max-width:600px;background:#ffffff;border-radius:8px;margin:0 auto 16px"><tr>` +
        `<td class="column" width="200" valign="top" style="padding:16px;font-family:Helvetica,Arial,sans-serif"><a href="https://shop.example/p/${n}-${i}?utm_source=mail"><img src="https://cdn.shop.example/img/${n}-${i}.png" width="168" height="168" alt="Product ${i}" style="display:block;border:0;width:168px;height:auto"></a></td>` +
        `<td class="column" width="400" valign="top" style="padding:16px 16px 16px 0;font-family:Helvetica,Arial,sans-serif;font-size:15px;line-height:22px;color:#333333">` +
        `<h2 style="margin:0 0 8px;font-size:20px;line-height:26px;color:#111111">Offer ${n}.${i}</h2><p style="margin:0 0 12px">${text}</p>` +
        `<table role="presentation" class="button" cellpadding="0" cellspacing="0"><tr><td style="border-radius:4px;background-color:#0d6efd"><a href="https://shop.example/buy/${n}-${i}" style="display:inline-block;padding:10px 18px;color:#ffffff;text-decoration:none;font-weight:bold">Buy now</a></td></tr></table>` +
        `</td></tr></table>\n`,
    )
  }
  html += rows.join('') + '</td></tr></table></body></html>'
  return [
    'From: "Shop" <news@shop.example>',
    `To: customer${n}@example.com`,
    `Subject: Spring sale ${n}`,
    `Message-ID: <marketing-${n}@shop.example>`,
    'Date: Mon, 06 May 2024 07:08:09 +0000',
    'MIME-Version: 1.0',
    'Content-Type: text/html; charset=utf-8',
    'Content-Transfer-Encoding: quoted-printable',
    '',
    html.replace(/=/g, '=3D').replace(/(.{1,72})/g, '$1=\r\n'),
    '',
  ].join('\r\n')
}

/** An HTML-only message of about `bytes` bytes of `<b>x<b>x…`, never closed (HTML-to-text takes time quadratic in it), in lines SMTP takes. */
export function buildHostileHtml(bytes) {
  const line = `${'<b>x'.repeat(19)}\r\n`
  const head = 'From: a@example.com\r\nTo: b@example.com\r\nSubject: hostile\r\nContent-Type: text/html; charset=utf-8\r\n\r\n'
  return head + line.repeat(Math.ceil(bytes / line.length))
}
