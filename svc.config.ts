// The configuration `npm start` runs in this repository (svc reads svc.config.ts
// from the folder it starts in). It is checked by `npm run typecheck` like the
// code: every option is typed, a plugin's own options too.
import { defineConfig } from 'svc-mail'
// One of the example plugins of docs/plugins.md, loaded as a user's own plugin is.
import keywordAlerts from './docs/examples/keyword-alerts.js'

export default defineConfig({
  // Off until words are given: `npm start -- --alert-words deploy,outage`
  // (or SVC_ALERT_WORDS) raises an alert for mail about them.
  alertWords: [],
  plugins: [keywordAlerts],
})
