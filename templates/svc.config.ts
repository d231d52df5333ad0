import { defineConfig, definePlugin } from 'svc-mail'

// svc configuration. Precedence: command-line flag > SVC_* variable > this file > default.
// Run it with: npx svc --config svc.config.ts
export default defineConfig({
  /* options */
  plugins: [
    // Plugins get the same context as the built-ins; see docs/plugins.md.
    definePlugin({
      name: 'log-subjects',
      setup({ hooks, logger }) {
        hooks.hook('mail:received', (email) => logger.info(`caught: ${email.subject}`))
      },
    }),
  ],
})
