import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { freePort } from './cli.js'

const SPAMD = '/usr/sbin/spamd'

/** Whether the spam check's tests run: spamd is installed, or CI requires it (and a missing one fails). */
export const spamdAvailable = existsSync(SPAMD) || process.env.SVC_TEST_SPAMD === 'required'

/** A real spamd on a loopback port, ready to score; `stop` ends it. */
export async function startSpamd(): Promise<{ address: string; stop: () => void }> {
  const port = await freePort()
  // -L: local tests only (no network); -u: spamd will not run as root; -x: no per-user config.
  const spamd: ChildProcess = spawn(SPAMD, ['-L', '-x', '-u', 'nobody', '--listen', `127.0.0.1:${port}`, '--max-children', '1', '--min-children', '1', '-s', 'stderr'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  await new Promise<void>((resolve, reject) => {
    let log = ''
    spamd.stderr!.on('data', (chunk: Buffer) => {
      log += chunk.toString()
      if (log.includes('server successfully spawned child process')) resolve()
    })
    spamd.once('error', reject)
    spamd.once('exit', (code) => reject(new Error(`spamd exited (${code}): ${log}`)))
  })
  return { address: `127.0.0.1:${port}`, stop: () => spamd.kill() }
}
