/** The platforms a client runs on, as `?platforms=` names them. */
export const PLATFORMS = ['desktop', 'webmail', 'mobile'] as const
export type Platform = (typeof PLATFORMS)[number]
