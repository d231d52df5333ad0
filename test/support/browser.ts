import { existsSync } from 'node:fs'

/** The Chromium the browser tests drive; SVC_TEST_CHROMIUM points elsewhere. */
export const CHROMIUM = process.env.SVC_TEST_CHROMIUM ?? '/usr/bin/chromium'

/** SVC_TEST_BROWSER=required (.ci/run sets it): a missing Chromium fails the browser tests rather than skipping them. */
const required = process.env.SVC_TEST_BROWSER === 'required'

/** Whether the browser tests run: Chromium is there, or they are required (and then fail without it). */
export const browserTestsRun = required || existsSync(CHROMIUM)

export const BROWSER_SKIP_LINE = `Browser tests skipped: no Chromium at ${CHROMIUM}. To run them, install it (apt-get install chromium) or point SVC_TEST_CHROMIUM at one; SVC_TEST_BROWSER=required makes them fail instead of skipping.`

/** A test file that launches the browser (through test/inbox-support.ts) is a browser test file. */
export const isBrowserTestFile = (source: string) => source.includes("from './inbox-support.js'")
