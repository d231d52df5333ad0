const { htmlToText } = require('html-to-text')
for (const kb of [16, 64, 128]) {
  for (const unit of ['<b>x', '<table><tr><td>x', '<li>x','<p><b>x', '<b><p>x', '<div><b>x', '<font><p>x','<ul><li>x', '<b></p>x', '<a href=x>y']) {
    const html = unit.repeat(Math.floor(kb * 1024 / unit.length))
    const t = Date.now(); let r='ok'; try { htmlToText(html) } catch (e) { r = e.message.slice(0,30) } console.log(kb, unit, Date.now() - t, r)
  }
}
