// A virtual list: only the rows in view (plus a margin) exist in the DOM, so
// tens of thousands of messages scroll as smoothly as ten.

import { h } from './dom.js'

const OVERSCAN = 8

/**
 * @param {object} options
 * @param {HTMLElement} options.element the scrolling container
 * @param {number} options.rowHeight every row's height in pixels
 * @param {(index: number) => object | undefined} options.getItem undefined while its page loads
 * @param {(item: object | undefined, index: number) => string} options.rowKey a row is rebuilt when its key changes
 * @param {(item: object | undefined, index: number) => HTMLElement} options.renderRow
 * @param {() => HTMLElement | null} options.renderEmpty shown when there are no rows
 * @param {(first: number, last: number) => void} options.onRange told which rows are in view after each render
 */
export function createVirtualList({ element, rowHeight, getItem, rowKey, renderRow, renderEmpty, onRange }) {
  const spacer = h('div', { class: 'list-spacer' })
  element.append(spacer)
  let total = 0
  let rows = new Map()
  let empty = null
  let frame = 0
  // Until the list is first laid out it sits at its top, no taller than the window: the first rows go in without a
  // layout of the page forced to measure it, and the one layout before the first paint has them.
  let laidOut = false
  const scrollTop = () => (laidOut ? element.scrollTop : 0)
  const height = () => (laidOut ? element.clientHeight : window.innerHeight)

  const visible = () => {
    const first = Math.max(0, Math.floor(scrollTop() / rowHeight) - OVERSCAN)
    const last = Math.min(total - 1, Math.ceil((scrollTop() + height()) / rowHeight) + OVERSCAN)
    return [first, last]
  }

  function render() {
    frame = 0
    spacer.style.height = `${total * rowHeight}px`
    const [first, last] = visible()
    const next = new Map()
    for (let index = first; index <= last; index++) {
      const item = getItem(index)
      const key = rowKey(item, index)
      let row = rows.get(index)
      rows.delete(index)
      if (!row || row.key !== key) {
        const el = renderRow(item, index)
        el.style.transform = `translateY(${index * rowHeight}px)`
        if (row) row.el.replaceWith(el)
        else spacer.append(el)
        row = { key, el }
      }
      next.set(index, row)
    }
    for (const row of rows.values()) row.el.remove()
    rows = next

    empty?.remove()
    empty = total === 0 ? renderEmpty() : null
    if (empty) element.append(empty)
    if (total > 0) onRange(first, last)
  }

  const schedule = () => {
    if (!frame) frame = requestAnimationFrame(render)
  }
  element.addEventListener('scroll', schedule, { passive: true })
  new ResizeObserver(() => {
    laidOut = true
    schedule()
  }).observe(element)

  return {
    /** Redraws the rows whose key changed, at the next frame. */
    update: schedule,
    /** The same at once: fresh rows are in the document before anything else runs. */
    render() {
      cancelAnimationFrame(frame)
      render()
    },
    setTotal(count) {
      total = count
      schedule()
    },
    /** The rows in view, without the margin. */
    inView: () => [Math.floor(scrollTop() / rowHeight), Math.ceil((scrollTop() + height()) / rowHeight) - 1],
    /** Scrolls just enough for row `index` to be fully visible. */
    reveal(index) {
      const top = index * rowHeight
      if (top < element.scrollTop) element.scrollTop = top
      else if (top + rowHeight > element.scrollTop + element.clientHeight) element.scrollTop = top + rowHeight - element.clientHeight
    },
    /** Scrolls by whole rows, after rows were added or removed above the view. */
    shift(rows) {
      spacer.style.height = `${total * rowHeight}px`
      element.scrollTop += rows * rowHeight
    },
    scrollToTop() {
      element.scrollTop = 0
    },
  }
}
