import { request } from 'node:http'
import { expect } from 'vitest'

/** Asserts a REST error: this status, a JSON body `{ error: <non-empty string> }`. Resolves the message. */
export async function expectJsonError(response: Response, status: number): Promise<string> {
  expect(response.status).toBe(status)
  expect(response.headers.get('content-type')).toMatch(/^application\/json/)
  const body = (await response.json()) as { error?: unknown }
  expect(Object.keys(body)).toEqual(['error'])
  expect(typeof body.error === 'string' && body.error.length > 0).toBe(true)
  return body.error as string
}

/**
 * GET with the path sent byte for byte as given: fetch would resolve `../`
 * itself, and traversal attempts must reach the server untouched.
 */
export function rawRequest(baseUrl: string, path: string, { method = 'GET', headers = {} }: { method?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; body: string }> {
  const url = new URL(baseUrl)
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method, headers }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (body += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

export const rawGet = (baseUrl: string, path: string) => rawRequest(baseUrl, path)
