import type { SvcPlugin } from 'svc-mail/kit'
import api from './api/index.js'
import auth from './auth/index.js'
import chaos from './chaos/index.js'
import checks from './checks/index.js'
import eviction from './eviction/index.js'
import inboxes from './inboxes/index.js'
import mcp from './mcp/index.js'
import memory from './memory/index.js'
import metrics from './metrics/index.js'
import persistence from './persistence/index.js'
import postgres from './postgres/index.js'
import relay from './relay/index.js'
import retention from './retention/index.js'
import socketio from './socketio/index.js'
import wait from './wait/index.js'
import web from './web/index.js'
import webhooks from './webhooks/index.js'

/*
 * The imports above are values, which the emitted declarations leave out.
 * Imported for their own sake too, each built-in's declarations are loaded
 * with these, and with them its `declare module 'svc-mail'` augmentation
 * (options, services, hooks): whoever imports svc-mail gets them typed.
 */
import './api/index.js'
import './auth/index.js'
import './chaos/index.js'
import './checks/index.js'
import './eviction/index.js'
import './inboxes/index.js'
import './mcp/index.js'
import './memory/index.js'
import './metrics/index.js'
import './persistence/index.js'
import './postgres/index.js'
import './relay/index.js'
import './retention/index.js'
import './socketio/index.js'
import './wait/index.js'
import './web/index.js'
import './webhooks/index.js'

/**
 * The built-in plugins, in set-up order: auth guards every web route before
 * any is served; persistence restores the backlog before eviction and
 * retention trim it.
 * Each can be turned off by name (`disablePlugins`) or replaced by a user
 * plugin of the same name.
 */
export const builtinPlugins: SvcPlugin[] = [memory, postgres, auth, inboxes, persistence, eviction, retention, wait, relay, webhooks, metrics, api, chaos, socketio, mcp, checks, web]
