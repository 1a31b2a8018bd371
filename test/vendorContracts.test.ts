import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { importOpenApi, type OpenApiProtocol } from '../shared/contracts/importOpenApi.js';
import type { ImportedOperation } from '../shared/contracts/types.js';
import {
  compareShape,
  compileContract,
  fieldCoverage,
  type AnalysedOperation,
  type CompiledContract,
  type Finding,
  type SchemaShape,
} from '../shared/analysis/index.js';
import { arr, B, I, missing, mismatch, N, NULL, obj, S, undeclared } from './helpers/shapes.js';
import { CORPUS_DIR } from './helpers/contracts.js';

// 00-decisions §5 and §7 on published vendor documents: what the importer leaves unchecked
// (a `oneOf` that is not "schema or null") reports nothing there, while the rest of the same
// payload is compared. Every shape below is written by hand from the document itself, so these
// tests do not depend on what the importer stores.

const ONE_OF = 'composition keyword oneOf';

/** A shape with `fields` removed and `changes` added or replaced (fields of an object shape). */
function edit(shape: SchemaShape, changes: Record<string, SchemaShape>, removed: string[] = []): SchemaShape {
  if (shape.kind !== 'object') throw new Error('not an object shape');
  const fields: Record<string, SchemaShape> = { ...shape.fields, ...changes };
  for (const name of removed) delete fields[name];
  return obj(fields);
}

/** The operation as management and the analyzer load it (contract_operations + its unchecked pointers). */
function analysed(operation: ImportedOperation, id: string, schema: Record<string, unknown> = operation.schema): AnalysedOperation {
  return {
    id,
    operationKey: operation.operationKey,
    method: operation.method,
    routeTemplate: operation.routeTemplate,
    payloadLocation: operation.payloadLocation,
    statusSelector: operation.statusSelector,
    schema,
    uncheckedPointers: [...new Set(operation.unchecked.map((entry) => entry.schemaPointer))],
  };
}

interface Vendor {
  operations: ImportedOperation[];
  contract: CompiledContract;
  /** The imported operation with this operationKey. */
  operation(key: string): ImportedOperation;
  /** Findings of `shape` against the operation with this key, through the compiled contract. */
  findings(key: string, shape: SchemaShape): Finding[];
  /** The same, with the schema as read back from storage (JSON, no shared objects). */
  storedFindings(key: string, shape: SchemaShape): Finding[];
}

function vendor(file: string, protocol: OpenApiProtocol): Vendor {
  const document = JSON.parse(readFileSync(CORPUS_DIR + file, 'utf8')) as Record<string, unknown>;
  const { operations } = importOpenApi(document, protocol);
  const contract = compileContract(operations.map((operation, index) => analysed(operation, `cop_${index}`)));
  const stored = compileContract(
    operations.map((operation, index) => analysed(operation, `cop_${index}`, JSON.parse(JSON.stringify(operation.schema)))),
  );
  const find = (list: readonly AnalysedOperation[], key: string): AnalysedOperation => {
    const found = list.find((operation) => operation.operationKey === key);
    if (found === undefined) throw new Error(`no operation ${key} in ${file}`);
    return found;
  };
  return {
    operations,
    contract,
    operation: (key) => {
      const found = operations.find((operation) => operation.operationKey === key);
      if (found === undefined) throw new Error(`no operation ${key} in ${file}`);
      return found;
    },
    findings: (key, shape) => compareShape(contract.schemaOf(find(contract.operations, key)), shape),
    storedFindings: (key, shape) => compareShape(stored.schemaOf(find(stored.operations, key)), shape),
  };
}

/** The shape of a JSON value (what a collector reports, without the values). */
function shapeOf(value: unknown): SchemaShape {
  if (value === null) return NULL;
  if (Array.isArray(value)) {
    // The collector merges items; the examples used here have items of one shape.
    return value.length === 0 ? arr() : arr(shapeOf(value[0]));
  }
  switch (typeof value) {
    case 'string':
      return S;
    case 'boolean':
      return B;
    case 'number':
      return Number.isInteger(value) ? I : N;
    case 'object':
      return obj(Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([name, field]) => [name, shapeOf(field)])));
    default:
      throw new Error(`not JSON: ${typeof value}`);
  }
}

describe('Discord (discord-v3.1.json)', () => {
  const discord = vendor('discord-v3.1.json', 'http-api');
  const route = '/applications/{application_id}/activity-instances/{instance_id}';
  const OK = `GET ${route}:response:200`;
  const CLIENT_ERROR = `GET ${route}:response:4XX`;
  const RATE_LIMITED = `GET ${route}:response:429`;

  // components/schemas/EmbeddedActivityInstance: required application_id (SnowflakeType: string),
  // instance_id, launch_id, location (oneOf GuildChannelLocation | PrivateChannelLocation), users
  // (array of SnowflakeType); no additionalProperties.
  const guildLocation = obj({ id: S, kind: S, channel_id: S, guild_id: S });
  const instance = obj({ application_id: S, instance_id: S, launch_id: S, location: guildLocation, users: arr(S) });

  it('leaves the location oneOf unchecked, and only it', () => {
    expect(discord.operation(OK).unchecked).toEqual([
      {
        pointer: '/components/schemas/EmbeddedActivityInstance/properties/location/oneOf',
        schemaPointer: '/$defs/EmbeddedActivityInstance/properties/location',
        reason: ONE_OF,
      },
    ]);
    expect(discord.operation(CLIENT_ERROR).unchecked).toEqual([
      { pointer: '/components/schemas/ErrorDetails/oneOf', schemaPointer: '/$defs/ErrorDetails', reason: ONE_OF },
    ]);
    expect(discord.operation(RATE_LIMITED).unchecked).toEqual([]);
  });

  it("matches the real status codes to the route's operations", () => {
    const matched = (statusCode: number) =>
      discord.contract.match({ method: 'GET', routeTemplate: route, payloadLocation: 'response', statusCode })?.operationKey ?? null;
    expect(matched(200)).toBe(OK);
    expect(matched(404)).toBe(CLIENT_ERROR);
    expect(matched(429)).toBe(RATE_LIMITED);
    expect(matched(500)).toBeNull();
    expect(matched(201)).toBeNull();
    expect(discord.contract.match({ method: 'GET', routeTemplate: route, payloadLocation: 'request', statusCode: 200 })).toBeNull();
  });

  it('finds nothing in conforming shapes', () => {
    expect(discord.findings(OK, instance)).toEqual([]);
    expect(discord.findings(OK, edit(instance, { users: arr() }))).toEqual([]);
  });

  it('reports exactly the drift of ordinary fields', () => {
    const drifted = edit(instance, { application_id: I, users: arr(I), activity_type: S }, ['launch_id']);
    expect(discord.findings(OK, drifted)).toEqual([
      undeclared('/activity_type', 'string'),
      mismatch('/application_id', 'string', 'integer'),
      missing('/launch_id', 'string'),
      mismatch('/users/-', 'string', 'integer'),
    ]);
    expect(discord.findings(OK, S)).toEqual([mismatch('', 'object', 'string')]);
  });

  it('reports nothing at or below the unchecked location, and still the drift beside it', () => {
    const locations: SchemaShape[] = [
      obj({ id: S, kind: S, channel_id: S }), // PrivateChannelLocation
      obj({ id: S, kind: S, channel_id: S, guild_id: S, thread_id: S, extra: obj({ nested: arr(obj({ x: I })) }) }),
      obj({ id: I, kind: B }),
      obj({}),
      S,
      NULL,
      arr(I),
    ];
    for (const location of locations) {
      expect(discord.findings(OK, edit(instance, { location }))).toEqual([]);
      expect(discord.findings(OK, edit(instance, { location, instance_id: N }))).toEqual([mismatch('/instance_id', 'string', 'number')]);
    }
    // Still required: its schema is unknown, so any kind is expected.
    expect(discord.findings(OK, edit(instance, {}, ['location']))).toEqual([missing('/location', 'any')]);
  });

  it('compares the flattened error response (allOf Error + errors: ErrorDetails oneOf) and leaves errors open', () => {
    // components/schemas/ErrorResponse: allOf [Error {code: integer, message: string; both required},
    // {errors: $ref ErrorDetails}]; ErrorDetails is a oneOf (recursive map | InnerErrors).
    const error = obj({ code: I, message: S });
    const fieldErrors = obj({ name: obj({ _errors: arr(obj({ code: S, message: S })) }) });
    expect(discord.findings(CLIENT_ERROR, error)).toEqual([]);
    expect(discord.findings(CLIENT_ERROR, edit(error, { errors: fieldErrors }))).toEqual([]);
    expect(discord.findings(CLIENT_ERROR, edit(error, { errors: arr(I) }))).toEqual([]);
    expect(discord.findings(CLIENT_ERROR, obj({ code: S, errors: fieldErrors, retry_after: N }))).toEqual([
      mismatch('/code', 'integer', 'string'),
      missing('/message', 'string'),
      undeclared('/retry_after', 'number'),
    ]);
    // RatelimitedResponse: allOf [Error, {retry_after: number, global: boolean; both required}].
    expect(discord.findings(RATE_LIMITED, obj({ code: I, message: S, retry_after: I, global: B }))).toEqual([]);
    expect(discord.findings(RATE_LIMITED, obj({ code: I, message: S, retry_after: S, errors: obj({}) }))).toEqual([
      undeclared('/errors', 'object'),
      missing('/global', 'boolean'),
      mismatch('/retry_after', 'number', 'string'),
    ]);
  });

  it('lists the unchecked places in the coverage', () => {
    const coverage = (key: string) =>
      fieldCoverage(
        discord.contract.schemaOf(discord.contract.operations.find((operation) => operation.operationKey === key) as AnalysedOperation),
      );
    expect(coverage(OK)).toEqual({
      declared: ['/application_id', '/instance_id', '/launch_id', '/location', '/users'],
      truncated: false,
      unchecked: ['/location'],
    });
    expect(coverage(CLIENT_ERROR)).toEqual({ declared: ['/code', '/errors', '/message'], truncated: false, unchecked: ['/errors'] });
    expect(coverage(RATE_LIMITED)).toEqual({ declared: ['/code', '/global', '/message', '/retry_after'], truncated: false, unchecked: [] });
  });

  it('gives the same findings with the schema read back from storage', () => {
    const shapes = [instance, edit(instance, { application_id: I, activity_type: S, location: obj({ x: S }) }, ['launch_id'])];
    for (const shape of shapes) expect(discord.storedFindings(OK, shape)).toEqual(discord.findings(OK, shape));
    const error = obj({ code: S, errors: obj({ a: obj({ _errors: arr(obj({})) }) }), extra: B });
    expect(discord.storedFindings(CLIENT_ERROR, error)).toEqual(discord.findings(CLIENT_ERROR, error));
  });
});

describe('OpenAI (openai-2024-04-v3.0.json)', () => {
  const openai = vendor('openai-2024-04-v3.0.json', 'http-api');
  const route = '/fine_tuning/jobs/{fine_tuning_job_id}';
  const JOB = `GET ${route}:response:200`;
  const CHAT = 'POST /chat/completions:response:200';

  // components/schemas/FineTuningJob (OpenAPI 3.0, `nullable: true` means "or null"): every
  // property but `integrations` is required; hyperparameters.n_epochs is
  // oneOf [string enum "auto", integer 1..50] (not the nullable idiom, not an enumeration).
  const queued = obj({
    id: S,
    object: S,
    created_at: I,
    error: NULL,
    fine_tuned_model: NULL,
    finished_at: NULL,
    hyperparameters: obj({ n_epochs: S }),
    model: S,
    organization_id: S,
    result_files: arr(),
    seed: I,
    status: S,
    trained_tokens: NULL,
    training_file: S,
    validation_file: NULL,
  });
  const succeeded = edit(queued, {
    fine_tuned_model: S,
    finished_at: I,
    hyperparameters: obj({ n_epochs: I }),
    result_files: arr(S),
    trained_tokens: I,
    validation_file: S,
    integrations: arr(obj({ type: S, wandb: obj({ project: S, name: NULL, entity: S, tags: arr(S) }) })),
  });
  const failed = edit(queued, { error: obj({ code: S, message: S, param: NULL }), integrations: NULL });

  it('leaves hyperparameters.n_epochs unchecked, and only it', () => {
    expect(openai.operation(JOB).unchecked).toEqual([
      {
        pointer: '/components/schemas/FineTuningJob/properties/hyperparameters/properties/n_epochs/oneOf',
        schemaPointer: '/$defs/FineTuningJob/properties/hyperparameters/properties/n_epochs',
        reason: ONE_OF,
      },
    ]);
    expect(openai.operation(CHAT).unchecked).toEqual([]);
  });

  it('matches the real status code to the operation', () => {
    const matched = (method: string, routeTemplate: string, statusCode: number) =>
      openai.contract.match({ method, routeTemplate, payloadLocation: 'response', statusCode })?.operationKey ?? null;
    expect(matched('GET', route, 200)).toBe(JOB);
    expect(matched('GET', '/fine_tuning/jobs', 200)).toBe('GET /fine_tuning/jobs:response:200');
    expect(matched('GET', route, 404)).toBeNull();
    expect(matched('DELETE', route, 200)).toBeNull();
    expect(matched('POST', '/chat/completions', 200)).toBe(CHAT);
  });

  it('finds nothing in conforming shapes', () => {
    expect(openai.findings(JOB, queued)).toEqual([]);
    expect(openai.findings(JOB, succeeded)).toEqual([]);
    expect(openai.findings(JOB, failed)).toEqual([]);
  });

  it('reports exactly the drift of ordinary fields, also beside the unchecked one', () => {
    const drifted = edit(
      succeeded,
      {
        created_at: S,
        error: obj({ code: S, message: S }),
        finished_at: S,
        hyperparameters: obj({ n_epochs: S, batch_size: I }),
        integrations: arr(obj({ type: S, wandb: obj({ project: I }) })),
        user_provided_suffix: NULL,
      },
      ['seed'],
    );
    expect(openai.findings(JOB, drifted)).toEqual([
      mismatch('/created_at', 'integer', 'string'),
      missing('/error/param', 'string|null'),
      mismatch('/finished_at', 'integer|null', 'string'),
      undeclared('/hyperparameters/batch_size', 'integer'),
      mismatch('/integrations/-/wandb/project', 'string', 'integer'),
      missing('/seed', 'integer'),
      undeclared('/user_provided_suffix', 'null'),
    ]);
    expect(openai.findings(JOB, edit(queued, { error: S, status: NULL }))).toEqual([
      mismatch('/error', 'object|null', 'string'),
      mismatch('/status', 'string', 'null'),
    ]);
  });

  it('reports nothing at or below the unchecked n_epochs, and still the drift beside it', () => {
    for (const epochs of [S, I, N, B, NULL, obj({ auto: B, nested: obj({ x: arr(S) }) }), arr(I)]) {
      expect(openai.findings(JOB, edit(queued, { hyperparameters: obj({ n_epochs: epochs }) }))).toEqual([]);
      expect(openai.findings(JOB, edit(queued, { hyperparameters: obj({ n_epochs: epochs }), model: I }))).toEqual([
        mismatch('/model', 'string', 'integer'),
      ]);
    }
    expect(openai.findings(JOB, edit(queued, { hyperparameters: obj({}) }))).toEqual([missing('/hyperparameters/n_epochs', 'any')]);
  });

  it('compares a chat completion, which nothing leaves unchecked', () => {
    // components/schemas/CreateChatCompletionResponse with ChatCompletionResponseMessage and CompletionUsage.
    const completion = obj({
      id: S,
      object: S,
      created: I,
      model: S,
      system_fingerprint: S,
      choices: arr(obj({ index: I, finish_reason: S, logprobs: NULL, message: obj({ role: S, content: S }) })),
      usage: obj({ prompt_tokens: I, completion_tokens: I, total_tokens: I }),
    });
    expect(openai.findings(CHAT, completion)).toEqual([]);
    const drifted = edit(
      completion,
      {
        choices: arr(obj({ index: I, finish_reason: S, message: obj({ role: S, content: NULL, refusal: NULL }) })),
        usage: obj({ prompt_tokens: I, completion_tokens: I, total_tokens: N }),
        service_tier: S,
      },
      ['created'],
    );
    expect(openai.findings(CHAT, drifted)).toEqual([
      missing('/choices/-/logprobs', 'object|null'),
      undeclared('/choices/-/message/refusal', 'null'),
      missing('/created', 'integer'),
      undeclared('/service_tier', 'string'),
      mismatch('/usage/total_tokens', 'integer', 'number'),
    ]);
  });

  it('lists the unchecked place in the coverage', () => {
    const operation = openai.contract.operations.find((candidate) => candidate.operationKey === JOB) as AnalysedOperation;
    const coverage = fieldCoverage(openai.contract.schemaOf(operation));
    expect(coverage.unchecked).toEqual(['/hyperparameters/n_epochs']);
    expect(coverage.declared).toContain('/hyperparameters/n_epochs');
    expect(coverage.declared).toContain('/integrations/-/wandb/tags');
  });

  it('gives the same findings with the schema read back from storage', () => {
    const shape = edit(succeeded, { created_at: S, hyperparameters: obj({ n_epochs: obj({ a: S }), extra: B }), extra: I }, ['seed']);
    expect(openai.storedFindings(JOB, shape)).toEqual(openai.findings(JOB, shape));
  });
});

describe('Adyen transfer webhooks (adyen-transfer-webhooks-v3.1.json)', () => {
  const adyen = vendor('adyen-transfer-webhooks-v3.1.json', 'http-webhook');
  const CREATED = 'POST balancePlatform.transfer.created:message:default';
  const UPDATED = 'POST balancePlatform.transfer.updated:message:default';

  // components/schemas/TransferNotificationRequest {data: TransferData, environment, timestamp,
  // type}; required environment, data. Every object schema has `additionalProperties: false`.
  // TransferData requires status, category, amount (Amount: currency string, value integer; both
  // required). categoryData and tracking are oneOfs; counterparty.bankAccount (BankAccountV3)
  // requires accountHolder (PartyIdentification) and accountIdentification (a oneOf of 16 schemas);
  // events are TransferEvent, whose eventsData items and trackingData are oneOfs.
  const amount = obj({ currency: S, value: I });
  const bankAccount = obj({
    accountHolder: obj({ fullName: S, type: S, address: obj({ country: S, city: S, line1: S, postalCode: S }) }),
    accountIdentification: obj({ type: S, iban: S }),
  });
  const data = obj({
    id: S,
    type: S,
    category: S,
    status: S,
    direction: S,
    reason: S,
    reference: S,
    sequenceNumber: I,
    createdAt: S,
    balancePlatform: S,
    accountHolder: obj({ description: S, id: S, reference: S }),
    balanceAccount: obj({ id: S }),
    amount,
    balances: arr(obj({ currency: S, reserved: I })),
    counterparty: obj({ bankAccount }),
    categoryData: obj({ type: S, priority: S }),
    events: arr(obj({ id: S, type: S, status: S, bookingDate: S, amount, mutations: arr(obj({ currency: S, reserved: I })) })),
  });
  const notification = obj({ data, environment: S, timestamp: S, type: S });
  const withData = (changes: Record<string, SchemaShape>, removed: string[] = []): SchemaShape =>
    edit(notification, { data: edit(data, changes, removed) });
  const withBankAccount = (changes: Record<string, SchemaShape>, removed: string[] = []): SchemaShape =>
    withData({ counterparty: obj({ bankAccount: edit(bankAccount, changes, removed) }) });

  it('leaves the five oneOfs unchecked, the one deep in BankAccountV3 included', () => {
    expect(adyen.operation(CREATED).unchecked).toEqual([
      {
        pointer: '/components/schemas/BankAccountV3/properties/accountIdentification/oneOf',
        schemaPointer: '/$defs/BankAccountV3/properties/accountIdentification',
        reason: ONE_OF,
      },
      {
        pointer: '/components/schemas/TransferData/properties/categoryData/oneOf',
        schemaPointer: '/$defs/TransferData/properties/categoryData',
        reason: ONE_OF,
      },
      {
        pointer: '/components/schemas/TransferData/properties/tracking/oneOf',
        schemaPointer: '/$defs/TransferData/properties/tracking',
        reason: ONE_OF,
      },
      {
        pointer: '/components/schemas/TransferEvent/properties/eventsData/items/oneOf',
        schemaPointer: '/$defs/TransferEvent/properties/eventsData/items',
        reason: ONE_OF,
      },
      {
        pointer: '/components/schemas/TransferEvent/properties/trackingData/oneOf',
        schemaPointer: '/$defs/TransferEvent/properties/trackingData',
        reason: ONE_OF,
      },
    ]);
    expect(adyen.operation(UPDATED).unchecked).toEqual(adyen.operation(CREATED).unchecked);
  });

  it('matches the webhook message of each event type', () => {
    const matched = (routeTemplate: string, payloadLocation: string, statusCode: number) =>
      adyen.contract.match({ method: 'POST', routeTemplate, payloadLocation, statusCode })?.operationKey ?? null;
    expect(matched('balancePlatform.transfer.created', 'message', 200)).toBe(CREATED);
    expect(matched('balancePlatform.transfer.created', 'message', 500)).toBe(CREATED);
    expect(matched('balancePlatform.transfer.updated', 'message', 202)).toBe(UPDATED);
    expect(matched('balancePlatform.transfer.created', 'response', 200)).toBeNull();
    expect(matched('balancePlatform.transfer.deleted', 'message', 200)).toBeNull();
  });

  it('finds nothing in a conforming shape', () => {
    expect(adyen.findings(CREATED, notification)).toEqual([]);
    expect(adyen.findings(CREATED, obj({ data: obj({ amount, category: S, status: S }), environment: S }))).toEqual([]);
  });

  it('reports exactly the drift of ordinary fields, down into referenced schemas', () => {
    const drifted = edit(
      notification,
      {
        data: edit(
          data,
          {
            amount: obj({ currency: S, value: S }),
            counterparty: obj({
              bankAccount: edit(bankAccount, { storedPaymentMethodId: I, accountHolder: obj({ fullName: S, nickname: S }) }),
            }),
            events: arr(obj({ id: S, mutations: arr(obj({ balance: N })) })),
          },
          ['category'],
        ),
        live: S,
      },
      ['environment'],
    );
    expect(adyen.findings(CREATED, drifted)).toEqual([
      mismatch('/data/amount/value', 'integer', 'string'),
      missing('/data/category', 'string'),
      undeclared('/data/counterparty/bankAccount/accountHolder/nickname', 'string', true),
      mismatch('/data/counterparty/bankAccount/storedPaymentMethodId', 'string', 'integer'),
      mismatch('/data/events/-/mutations/-/balance', 'integer', 'number'),
      missing('/environment', 'string'),
      undeclared('/live', 'string', true),
    ]);
  });

  it('reports nothing at or below the unchecked places, and still the drift beside them', () => {
    const open = withData({
      counterparty: obj({
        bankAccount: edit(bankAccount, {
          accountIdentification: obj({ type: S, accountNumber: S, routingNumber: S, accountType: S, future: obj({ deep: arr(I) }) }),
        }),
      }),
      categoryData: obj({ type: S, anything: obj({ at: arr(obj({ all: NULL })) }) }),
      tracking: obj({ type: S, estimatedArrivalTime: S, status: I }),
      events: arr(obj({ id: S, eventsData: arr(obj({ type: S, merchantId: S, extra: B })), trackingData: obj({ type: S, reason: N }) })),
    });
    expect(adyen.findings(CREATED, open)).toEqual([]);
    const openAndDrifted = edit(open, { data: edit((open as { fields: Record<string, SchemaShape> }).fields.data, { direction: B }) });
    expect(adyen.findings(CREATED, openAndDrifted)).toEqual([mismatch('/data/direction', 'string', 'boolean')]);

    for (const identification of [S, NULL, arr(), obj({})]) {
      expect(adyen.findings(CREATED, withBankAccount({ accountIdentification: identification }))).toEqual([]);
    }
    // The oneOf's place is still required; its siblings are still compared.
    expect(adyen.findings(CREATED, withBankAccount({}, ['accountIdentification']))).toEqual([
      missing('/data/counterparty/bankAccount/accountIdentification', 'any'),
    ]);
    expect(adyen.findings(CREATED, withBankAccount({ extra: S }, ['accountHolder']))).toEqual([
      missing('/data/counterparty/bankAccount/accountHolder', 'object'),
      undeclared('/data/counterparty/bankAccount/extra', 'string', true),
    ]);
    // Only the items of eventsData are open: the array itself is still an array.
    expect(adyen.findings(CREATED, withData({ events: arr(obj({ eventsData: arr(S) })) }))).toEqual([]);
    expect(adyen.findings(CREATED, withData({ events: arr(obj({ eventsData: obj({ type: S }) })) }))).toEqual([
      mismatch('/data/events/-/eventsData', 'array', 'object'),
    ]);
  });

  it("finds nothing in the document's own examples of these events", () => {
    const document = JSON.parse(readFileSync(`${CORPUS_DIR}adyen-transfer-webhooks-v3.1.json`, 'utf8')) as {
      components: { examples: Record<string, { value: unknown }> };
    };
    const examples = Object.entries(document.components.examples);
    const created = examples.filter(([name]) => name.startsWith('post-balancePlatform.transfer.created-'));
    const updated = examples.filter(([name]) => name.startsWith('post-balancePlatform.transfer.updated-'));
    expect(created.length).toBe(4);
    expect(updated.length).toBe(13);
    for (const [name, example] of created)
      expect({ name, findings: adyen.findings(CREATED, shapeOf(example.value)) }).toEqual({ name, findings: [] });
    for (const [name, example] of updated)
      expect({ name, findings: adyen.findings(UPDATED, shapeOf(example.value)) }).toEqual({ name, findings: [] });
  });

  it('lists the unchecked places in the coverage', () => {
    const operation = adyen.contract.operations.find((candidate) => candidate.operationKey === CREATED) as AnalysedOperation;
    expect(fieldCoverage(adyen.contract.schemaOf(operation)).unchecked).toEqual([
      '/data/categoryData',
      '/data/counterparty/bankAccount/accountIdentification',
      '/data/events/-/eventsData/-',
      '/data/events/-/trackingData',
      '/data/tracking',
    ]);
  });

  it('gives the same findings with the schema read back from storage', () => {
    const shape = withData({
      counterparty: obj({ bankAccount: edit(bankAccount, { accountIdentification: obj({ any: S }), extra: B }) }),
      categoryData: S,
      amount: obj({ value: S }),
    });
    expect(adyen.storedFindings(CREATED, shape)).toEqual(adyen.findings(CREATED, shape));
    expect(adyen.findings(CREATED, shape)).toEqual([
      missing('/data/amount/currency', 'string'),
      mismatch('/data/amount/value', 'integer', 'string'),
      undeclared('/data/counterparty/bankAccount/extra', 'boolean', true),
    ]);
  });
});
