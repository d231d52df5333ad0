export interface SignupApp extends AsyncDisposable {
  /** The app's origin, e.g. http://127.0.0.1:54321 */
  url: string
  close(): Promise<void>
}

export function startSignupApp(options: { smtp: { host: string; port: number } }): Promise<SignupApp>
