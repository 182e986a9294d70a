/** Types for parse-prometheus-text-format (the package ships none): prom2json's shape. */
declare module "parse-prometheus-text-format" {
  interface Sample {
    readonly labels?: Readonly<Record<string, string>>
    /** Counters, gauges, untyped. */
    readonly value?: string
    /** Histograms: cumulative counts by upper bound. */
    readonly buckets?: Readonly<Record<string, string>>
    readonly count?: string
    readonly sum?: string
  }
  interface Family {
    readonly name: string
    readonly help: string
    readonly type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED"
    readonly metrics: ReadonlyArray<Sample>
  }
  const parsePrometheusTextFormat: (text: string) => Array<Family>
  export default parsePrometheusTextFormat
}
