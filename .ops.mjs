import { readFileSync, readdirSync } from 'node:fs'
import { parse, print } from 'graphql'
const files = [...readdirSync('test').filter(f=>f.endsWith('.ts')).map(f=>'test/'+f), ...readdirSync('test/support').map(f=>'test/support/'+f)]
for (const f of files) {
  const src = readFileSync(f,'utf8')
  for (const m of src.matchAll(/(?:export )?const (\w+) = graphql\(`([\s\S]*?)`\)/g)) {
    const doc = parse(m[2])
    const d = doc.definitions[0]
    const root = d.kind==='OperationDefinition' ? d.selectionSet.selections.map(s=>s.name.value).join(',') : 'fragment'
    console.log(`${f.replace('test/','')}\t${m[1]}\t${d.operation??'fragment'}\t${root}\t${print(doc).replace(/\s+/g,' ').slice(0,230)}`)
  }
}
