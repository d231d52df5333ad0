// How dates, sizes and people read in the inbox.

const time = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' })
const weekday = new Intl.DateTimeFormat(undefined, { weekday: 'short', hour: '2-digit', minute: '2-digit' })
const dayMonth = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short' })
const fullDate = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', year: 'numeric' })
const longDate = new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'medium' })
// Made once: toLocaleString() builds its formatter anew on every call, some tenths of a millisecond each, for every row drawn.
const dateTime = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' })
const number = new Intl.NumberFormat()

const DAY = 24 * 60 * 60 * 1000

/** Short, for the list: `14:05`, `Mon 14:05`, `5 Mar`, `5 Mar 2023`. */
export function shortTime(iso, now = new Date()) {
  const date = new Date(iso)
  if (date.toDateString() === now.toDateString()) return time.format(date)
  if (now - date < 6 * DAY && now - date > 0) return weekday.format(date)
  if (date.getFullYear() === now.getFullYear()) return dayMonth.format(date)
  return fullDate.format(date)
}

export const longTime = (iso) => longDate.format(new Date(iso))

/** Date and time in full figures, for a row's tooltip: as toLocaleString() writes it. */
export const exactTime = (iso) => dateTime.format(new Date(iso))

/** `Ann <ann@example.com>` or the bare address. */
export const person = (address) => (address.name ? `${address.name} <${address.address}>` : address.address)

/** The name when there is one, for the list. */
export const personShort = (address) => address?.name || address?.address || '(unknown sender)'

export const people = (addresses) => addresses.map(person).join(', ')

export function bytes(size) {
  if (size < 1024) return `${size} B`
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KB`
  return `${(size / 1024 / 1024).toFixed(1)} MB`
}

export const count = (n) => number.format(n)
