import { pathToFileURL } from 'node:url'
import type { Email } from '../types.js'

/** A storage driver's per-message work (StorageDriver.prepare), run beside the parse. */
export type Preparer = (email: Email, raw: Buffer) => unknown

const preparers = new Map<string, Promise<Preparer>>()

/** The `prepare` export of a compiled module, imported once per thread. */
export function loadPreparer(file: string): Promise<Preparer> {
  let loading = preparers.get(file)
  if (!loading) {
    loading = import(pathToFileURL(file).href).then((loaded: { prepare: Preparer }) => loaded.prepare)
    preparers.set(file, loading)
  }
  return loading
}
