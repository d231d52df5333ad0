import { parentPort } from 'node:worker_threads'
import { findHtmlFeatures } from './html-features.js'

/** One HTML body in, the slugs of the features it uses out: the parsing runs here, off svc's event loop. */
parentPort?.on('message', ({ seq, html }: { seq: number; html: string }) => {
  try {
    parentPort!.postMessage({ seq, features: [...findHtmlFeatures(html)] })
  } catch (error) {
    parentPort!.postMessage({ seq, error: (error as Error).message })
  }
})
