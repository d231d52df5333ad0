import { createRequire } from 'node:module'

/** One feature of the caniemail.com data, as the `caniemail` package ships it. */
interface CaniemailFeature {
  slug: string
  title: string
  url: string
  category: string
  keywords: string | null
  /** family -> platform -> version -> `y`, `a #1`, `n`, `u`... */
  stats: Record<string, Record<string, Record<string, string>>>
}

interface CaniemailData {
  last_update_date: string
  nicenames: { family: Record<string, string>; platform: Record<string, string> }
  data: CaniemailFeature[]
}

/**
 * The caniemail.com data from the `caniemail` package (its JSON alone: the
 * package's own checker is not what svc uses), read once.
 */
export const caniemailData: CaniemailData = createRequire(import.meta.url)('caniemail/caniemail.json') as CaniemailData

/** The HTML and CSS features (image formats and others are left out: the answer's categories are `html` and `css`). */
export const checkedFeatures = caniemailData.data.filter((feature) => feature.category === 'html' || feature.category === 'css')
