import { pathToFileURL } from 'node:url'
import type { Email } from '../contract/types.js'
import { parseEmail, readEmail, type HtmlText, type ParseInput } from './parse.js'

/** A storage driver's per-message work (StorageDriver.prepare), run beside the parse. */
type Preparer = (email: Email, raw: Buffer) => unknown

const preparers = new Map<string, Promise<Preparer>>()

/** The `prepare` export of a compiled module, imported once per thread. */
function loadPreparer(file: string): Promise<Preparer> {
  let loading = preparers.get(file)
  if (!loading) {
    loading = import(pathToFileURL(file).href).then((loaded: { prepare: Preparer }) => loaded.prepare)
    preparers.set(file, loading)
  }
  return loading
}

/**
 * Parses a message and runs a driver's `prepare` module on the record, on
 * the calling thread (this one or a worker). Undefined when `html` defers
 * and the message has HTML to convert to text.
 */
export async function parseAndPrepare(
  input: ParseInput,
  prepare: string | undefined,
  html: HtmlText = { mode: 'convert' },
): Promise<{ email: Email; prepared?: unknown } | undefined> {
  const email = html.mode === 'convert' ? await parseEmail(input) : await readEmail(input, html)
  if (!email) return undefined
  return { email, prepared: prepare === undefined ? undefined : (await loadPreparer(prepare))(email, input.raw) }
}
