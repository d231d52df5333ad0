import { defineConfig } from '@playwright/test'

export default defineConfig({
  testDir: '.',
  reporter: 'line',
  // CHROMIUM_PATH: a system Chromium instead of the one `npx playwright install` downloads.
  use: { launchOptions: { executablePath: process.env.CHROMIUM_PATH, args: ['--headless', '--no-sandbox', '--disable-gpu'] } },
})
