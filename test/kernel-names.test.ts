import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

/*
 * The kernel names no feature: what relay, the mail directory, MCP,
 * Socket.IO, webhooks or PostgreSQL do lives in their plugins, and src/
 * reaches them only through what plugins declare (options, routes, session
 * paths, methods, services, hooks). Comments may explain; code may not name them.
 */

const root = fileURLToPath(new URL('..', import.meta.url))
const FEATURES = /relay|mail[\s_-]?dir|persistence|mcp|socket\.?io|webhook|postgres/i

/** Every name and string of a module's code (identifiers, string and template text), never its comments. */
function namesInCode(file: string, text: string): Array<{ line: number; name: string }> {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const found: Array<{ line: number; name: string }> = []
  const visit = (node: ts.Node) => {
    const name =
      ts.isIdentifier(node) || ts.isPrivateIdentifier(node) ? node.text : ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node) ? node.text : undefined
    if (name !== undefined) found.push({ line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, name })
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/** `file:line: name` of each feature named in code. */
function featureNames(file: string, text: string): string[] {
  return namesInCode(file, text)
    .filter(({ name }) => FEATURES.test(name))
    .map(({ line, name }) => `${file}:${line}: ${name.slice(0, 120)}`)
}

const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    return entry.isDirectory() ? sources(path) : entry.name.endsWith('.ts') ? [path] : []
  })

describe('the kernel names no feature', () => {
  it('reads names and strings of code, not comments', () => {
    const sample = [
      '// The relay plugin sets relayEmail; persistence reloads the mail directory.',
      '/** Socket.IO and MCP attach here, webhooks and PostgreSQL elsewhere. */',
      "const paths = ['/socket.io']",
      'function sendToRelay(to: string) { return `${to} via postgres` }',
      'export const webhookCount = 0',
    ].join('\n')
    expect(featureNames('sample.ts', sample)).toEqual([
      "sample.ts:3: /socket.io",
      'sample.ts:4: sendToRelay',
      'sample.ts:4:  via postgres',
      'sample.ts:5: webhookCount',
    ])
  })

  it('no file of src/ names relay, the mail directory, MCP, Socket.IO, webhooks or PostgreSQL in code', () => {
    const named = sources(join(root, 'src')).flatMap((file) => featureNames(relative(root, file), readFileSync(file, 'utf8')))
    expect(named).toEqual([])
  })
})
