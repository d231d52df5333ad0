// The inbox list's pages, spelled once for the server, which carries the
// first one in the document, and for the page, which asks for the others:
// the page it finds there is the very one it would ask for first.

/** Summaries per page of the list: about three screens of rows on a tall window, and a small first answer. */
export const PAGE_SIZE = 50

/** The query of the page of summaries at `skip`. */
export const pageQuery = (skip: number, limit: number = PAGE_SIZE): URLSearchParams => new URLSearchParams({ skip: String(skip), limit: String(limit) })
