declare module 'parse-prometheus-text-format' {
  /** One sample: `value` for counters and gauges; `buckets`, `count` and `sum` for histograms. */
  export interface PrometheusSample {
    value?: string
    labels?: Record<string, string>
    buckets?: Record<string, string>
    count?: string
    sum?: string
  }
  export interface PrometheusFamily {
    name: string
    help: string
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED'
    metrics: PrometheusSample[]
  }
  export default function parsePrometheusTextFormat(text: string): PrometheusFamily[]
}
