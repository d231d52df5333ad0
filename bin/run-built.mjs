import { existsSync } from 'node:fs'

/** Imports a module of the compiled dist/, or explains that the package is not built yet. */
export async function importBuilt(command, path) {
  const entry = new URL(`../dist/${path}`, import.meta.url)
  if (!existsSync(entry)) {
    console.error(`${command}: not built yet; run \`npm install\` (or \`npm run build\`) in the svc folder first`)
    process.exit(1)
  }
  return import(entry.href)
}
