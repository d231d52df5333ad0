import { caniemailData, checkedFeatures } from './caniemail.js'
import { PLATFORMS, type Platform } from './platforms.js'

type Support = 'yes' | 'partial' | 'no'

/** Percentages, 0-100, adding up to 100 within rounding. */
interface SupportScore {
  supported: number
  partial: number
  unsupported: number
}

interface HtmlCheckWarning {
  slug: string
  title: string
  category: 'html' | 'css'
  url: string
  score: SupportScore
  results: Array<{ client: string; platform: Platform; support: Support }>
}

/** `GET /api/email/:id/html-check` */
export interface HtmlCheckResult {
  total: SupportScore
  clients: string[]
  warnings: HtmlCheckWarning[]
}

/** caniemail's platforms by where they run: an app on a computer, a web page, a phone. */
const PLATFORM_OF: Record<string, Platform> = {
  'desktop-webmail': 'webmail',
  webmail: 'webmail',
  'outlook-com': 'webmail',
  'mobile-webmail': 'mobile',
  ios: 'mobile',
  android: 'mobile',
}

interface Client {
  /** `gmail.desktop-webmail` */
  key: string
  name: string
  platform: Platform
}

const { nicenames } = caniemailData

/** Every client the data has results for, by family and platform, in the data's order. */
const clients: Client[] = (() => {
  const byKey = new Map<string, Client>()
  for (const feature of checkedFeatures) {
    for (const [family, platforms] of Object.entries(feature.stats)) {
      for (const platform of Object.keys(platforms)) {
        const key = `${family}.${platform}`
        if (byKey.has(key)) continue
        const name = `${nicenames.family[family] ?? family} ${nicenames.platform[platform] ?? platform}`
        byKey.set(key, { key, name, platform: PLATFORM_OF[platform] ?? 'desktop' })
      }
    }
  }
  return [...byKey.values()]
})()

/** `y`, `a #2`, `n #1`, `u`: the latest version's support, or undefined when unknown. */
function supportOf(versions: Record<string, string> | undefined): Support | undefined {
  const latest = versions && Object.values(versions).at(-1)
  switch (latest?.trim()[0]) {
    case 'y':
      return 'yes'
    case 'a':
      return 'partial'
    case 'n':
      return 'no'
    default:
      return undefined
  }
}

/** Each feature's known support per client, computed once. */
const supportTable = new Map(
  checkedFeatures.map((feature) => [
    feature.slug,
    {
      feature,
      results: clients.flatMap((client) => {
        const [family, platform] = client.key.split('.') as [string, string]
        const support = supportOf(feature.stats[family]?.[platform])
        return support ? [{ client, support }] : []
      }),
    },
  ]),
)

const round = (value: number) => Math.round(value * 100) / 100

function score(counts: Record<Support, number>): SupportScore {
  const all = counts.yes + counts.partial + counts.no
  if (all === 0) return { supported: 100, partial: 0, unsupported: 0 }
  return { supported: round((counts.yes / all) * 100), partial: round((counts.partial / all) * 100), unsupported: round((counts.no / all) * 100) }
}

/**
 * The answer for the features a message uses, on the clients of `platforms`:
 * `total` over every client and feature found; a warning for each feature
 * some client lacks, most lacked first.
 */
export function htmlCheckResult(features: Iterable<string>, platforms: readonly Platform[] = PLATFORMS): HtmlCheckResult {
  const wanted = new Set(platforms)
  const total = { yes: 0, partial: 0, no: 0 }
  const warnings: HtmlCheckWarning[] = []
  for (const slug of features) {
    const entry = supportTable.get(slug)
    if (!entry) continue
    const counts = { yes: 0, partial: 0, no: 0 }
    const results = entry.results.filter(({ client }) => wanted.has(client.platform))
    for (const { support } of results) {
      counts[support]++
      total[support]++
    }
    if (counts.partial + counts.no === 0) continue
    const { feature } = entry
    warnings.push({
      slug,
      title: feature.title.trim(),
      category: feature.category as 'html' | 'css',
      url: feature.url,
      score: score(counts),
      results: results.map(({ client, support }) => ({ client: client.name, platform: client.platform, support })),
    })
  }
  warnings.sort((a, b) => b.score.unsupported - a.score.unsupported || b.score.partial - a.score.partial || a.title.localeCompare(b.title))
  return { total: score(total), clients: clients.filter((client) => wanted.has(client.platform)).map((client) => client.name), warnings }
}

