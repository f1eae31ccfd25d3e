import { describe, expect, it } from '@jest/globals';
import { workloadTests } from './management-api-workloads.js';
import { http } from './runplane-process.js';
import {
  managementClient,
  lit,
  type ManagementClient,
  type ManagementTarget,
} from './management-client.js';

/**
 * RunPod's management clients against Runplane: the operations runpod-python's management
 * functions and runpodctl send, with the very shapes they send (python: inline literals and no
 * `variables`; runpodctl: typed variables, always a `variables` object), checked against what
 * they read, and against REST for the same objects (one implementation behind both doors).
 */
export function describeManagementApi(target: () => ManagementTarget): void {
  describe('RunPod management API (runpod-python and runpodctl wire shapes)', () => {
    const c = managementClient(target);
    accountTests(c);
    registryAuthTests(c, () => target().vault);
    workloadTests(c);
  });
}

function registryAuthTests(
  { gql, data, gqlError, newUserKey, suffix }: ManagementClient,
  vault: () => string,
): void {
  it('container registry auths: runpod-python and runpodctl create/update/delete, REST v1, never the password', async () => {
    const key = await newUserKey('readwrite');
    const other = await newUserKey('readwrite');
    const password = `pw-${suffix()}-secret`;
    const name = `hub-${suffix()}`;
    const rest = (method: string, path: string, body?: unknown, k = key) =>
      http(method, `${vault()}/v1/containerregistryauth${path}`, { key: `Bearer ${k}`, body });
    // runpod-python create_container_registry_auth: an inline literal input.
    const saved = data(
      await gql(
        `mutation SaveRegistryAuth { saveRegistryAuth(input: {name: ${lit(name)}, username: "me", password: ${lit(password)}}) { id name } }`,
        undefined,
        key,
      ),
      'saveRegistryAuth',
    );
    expect(saved).toEqual({ id: expect.any(String), name });
    // The same name again is a conflict; a NUL in the password is refused before anything is stored.
    gqlError(
      await gql(
        `mutation { saveRegistryAuth(input: {name: ${lit(name)}, username: "me", password: "x"}) { id } }`,
        undefined,
        key,
      ),
      'saveRegistryAuth',
      'CONFLICT',
    );
    const nul = gqlError(
      await gql(
        'mutation { saveRegistryAuth(input: {name: "nul", username: "me", password: "a\\u0000b"}) { id } }',
        undefined,
        key,
      ),
      'saveRegistryAuth',
      'BAD_USER_INPUT',
    );
    expect(nul).toMatch(/password must not contain a NUL/);
    // runpodctl registry list / get (REST v1) and myself { containerRegistryCreds }.
    const listed = await rest('GET', '');
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([saved]);
    expect((await rest('GET', `/${saved.id}`)).body).toEqual(saved);
    const me = data(
      await gql('query { myself { containerRegistryCreds { id name } } }', undefined, key),
      'myself',
    );
    expect(me.containerRegistryCreds).toEqual([saved]);
    // runpodctl registry update: a typed variable; the name stays, new credentials are sealed.
    const updated = data(
      await gql(
        'mutation($input: UpdateRegistryAuthInput!) { updateRegistryAuth(input: $input) { id name } }',
        { input: { id: saved.id, username: 'me2', password: `${password}-2` } },
        key,
      ),
      'updateRegistryAuth',
    );
    expect(updated).toEqual(saved);
    // Another user: 404 over REST, NOT_FOUND over GraphQL, and none of it listed.
    expect((await rest('GET', `/${saved.id}`, undefined, other)).status).toBe(404);
    expect((await rest('DELETE', `/${saved.id}`, undefined, other)).status).toBe(404);
    expect((await rest('GET', '', undefined, other)).body).toEqual([]);
    gqlError(
      await gql(
        `mutation { updateRegistryAuth(input: {id: ${lit(saved.id)}, username: "x", password: "y"}) { id } }`,
        undefined,
        other,
      ),
      'updateRegistryAuth',
      'NOT_FOUND',
    );
    gqlError(
      await gql(
        `mutation { deleteRegistryAuth(registryAuthId: ${lit(saved.id)}) }`,
        undefined,
        other,
      ),
      'deleteRegistryAuth',
      'NOT_FOUND',
    );
    // A readonly key reads but does not write.
    const reader = await newUserKey('readonly');
    expect(
      (await rest('POST', '', { name: 'ro', username: 'a', password: 'b' }, reader)).status,
    ).toBe(401);
    // REST create (runpodctl registry create): 200 {id, name}; bad bodies name the field.
    const created = await rest('POST', '', {
      name: `rest-${suffix()}`,
      username: 'u',
      password: password,
    });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual(['id', 'name']);
    const missing = await rest('POST', '', { name: 'no-password', username: 'u' });
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.body)).toMatch(/password/);
    // Nothing any answer carried held a password.
    const everything = JSON.stringify([
      (await rest('GET', '')).body,
      data(
        await gql('query { myself { containerRegistryCreds { id name } } }', undefined, key),
        'myself',
      ),
    ]);
    expect(everything).not.toContain(password);
    // runpod-python delete_container_registry_auth; runpodctl registry delete (REST 204).
    expect(
      data(
        await gql(
          `mutation DeleteRegistryAuth { deleteRegistryAuth(registryAuthId: ${lit(saved.id)}) }`,
          undefined,
          key,
        ),
        'deleteRegistryAuth',
      ),
    ).toBe(true);
    expect((await rest('DELETE', `/${created.body.id}`)).status).toBe(204);
    expect((await rest('GET', '')).body).toEqual([]);
    expect((await rest('GET', `/${saved.id}`)).status).toBe(404);
  });
}

function accountTests({ gql, data, rest, newUserKey, suffix }: ManagementClient): void {
  it('account: pubKey (get_user, update_user_settings, runpodctl ssh keys), user fields, network volumes', async () => {
    const keys =
      'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG0 one@host\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG1 two@host';
    // runpod-python: update_user_settings escapes newlines into the literal.
    const updated = data(
      await gql(
        `mutation { updateUserSettings( input: { pubKey: "${keys.replace(/\n/g, '\\n')}" } ) { id pubKey } }`,
      ),
      'updateUserSettings',
    );
    expect(updated).toEqual({ id: expect.any(String), pubKey: keys });
    // runpodctl: AddPublicSSHKey rewrites pubKey through a typed variable.
    const more = `${keys}\n\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG2 three@host`;
    data(
      await gql(
        'mutation Mutation($input: UpdateUserSettingsInput) { updateUserSettings(input: $input) { id } }',
        { input: { pubKey: more } },
      ),
      'updateUserSettings',
    );
    const volume = await rest('POST', '/networkvolumes', {
      name: 'models',
      size: 25,
      dataCenterId: 'LOCAL-1',
    });
    expect(volume.status).toBe(200);
    // runpod-python get_user (QUERY_USER), verbatim field list.
    const me = data(
      await gql(
        'query myself { myself { id pubKey networkVolumes { id name size dataCenterId } } }',
      ),
      'myself',
    );
    expect(me.pubKey).toBe(more);
    expect(me.networkVolumes).toContainEqual(volume.body);
    // runpodctl `user`: account fields that have no meaning here answer neutral values.
    const account = data(
      await gql(
        'query { myself { id email clientBalance currentSpendPerHr spendLimit notifyPodsStale notifyPodsGeneral notifyLowBalance } }',
        {},
      ),
      'myself',
    );
    expect(account).toEqual({
      id: me.id,
      email: null,
      clientBalance: 0,
      currentSpendPerHr: expect.any(Number),
      spendLimit: null,
      notifyPodsStale: false,
      notifyPodsGeneral: false,
      notifyLowBalance: false,
    });
    // runpodctl `network-volume` (REST): list, get, update, delete.
    expect((await rest('GET', '/networkvolumes')).body).toContainEqual(volume.body);
    const grown = await rest('PATCH', `/networkvolumes/${volume.body.id}`, { size: 30 });
    expect(grown.body).toEqual({ ...volume.body, size: 30 });
    expect((await rest('DELETE', `/networkvolumes/${volume.body.id}`)).status).toBe(204);
  });

  it('catalogue: get_gpus, get_gpu with lowestPrice, runpodctl gpu list / datacenter list / pools / get cloud', async () => {
    const all = data(
      await gql('query GpuTypes { gpuTypes { id displayName memoryInGb } }'),
      'gpuTypes',
    );
    expect(all).toContainEqual({
      id: 'NVIDIA GeForce RTX 4090',
      displayName: 'RTX 4090',
      memoryInGb: 24,
    });
    // runpod-python get_gpu(gpu_id, 2), verbatim field list.
    const one = data(
      await gql(
        `query GpuTypes { gpuTypes(input: {id: "NVIDIA GeForce RTX 4090"}) { maxGpuCount id displayName manufacturer memoryInGb cudaCores secureCloud communityCloud securePrice communityPrice oneMonthPrice threeMonthPrice oneWeekPrice communitySpotPrice secureSpotPrice lowestPrice(input: {gpuCount: 2}) { minimumBidPrice uninterruptablePrice } } }`,
      ),
      'gpuTypes',
    );
    expect(one).toHaveLength(1);
    expect(one[0]).toMatchObject({
      id: 'NVIDIA GeForce RTX 4090',
      securePrice: 0.69,
      secureSpotPrice: 0.35,
      secureCloud: true,
    });
    expect(one[0].lowestPrice).toEqual({ uninterruptablePrice: 1.38, minimumBidPrice: 0.7 });
    // get_gpu of an unknown id raises ValueError on an empty list.
    expect(
      data(
        await gql('query GpuTypes { gpuTypes(input: {id: "NVIDIA Nonexistent"}) { id } }'),
        'gpuTypes',
      ),
    ).toEqual([]);
    // runpodctl gpu list: gpu types, then availability from data centers.
    const listed = data(
      await gql('query { gpuTypes { id displayName memoryInGb secureCloud communityCloud } }', {}),
      'gpuTypes',
    );
    const centers = data(
      await gql(
        'query { dataCenters { id name location gpuAvailability { gpuTypeId displayName stockStatus } } }',
        {},
      ),
      'dataCenters',
    );
    expect(centers[0]).toMatchObject({ id: 'LOCAL-1', location: expect.any(String) });
    expect(centers[0].gpuAvailability.map((a: { gpuTypeId: string }) => a.gpuTypeId)).toEqual(
      listed.map((g: { id: string }) => g.id),
    );
    const pools = data(
      await gql('query { serverlessGpuPools { id gpuTypeIds } }', {}),
      'serverlessGpuPools',
    );
    expect(pools).toContainEqual({ id: 'ADA_24', gpuTypeIds: ['NVIDIA GeForce RTX 4090'] });
    // runpodctl (legacy) get cloud: lowest prices for a count, typed variable.
    const cloud = data(
      await gql(
        'query LowestPrice($input: GpuLowestPriceInput!) { gpuTypes { lowestPrice(input: $input) { gpuName gpuTypeId minimumBidPrice uninterruptablePrice minMemory minVcpu } } }',
        { input: { gpuCount: 1, secureCloud: false } },
      ),
      'gpuTypes',
    );
    expect(cloud).toContainEqual({
      lowestPrice: {
        gpuName: 'RTX 4090',
        gpuTypeId: 'NVIDIA GeForce RTX 4090',
        minimumBidPrice: 0.2,
        uninterruptablePrice: 0.34,
        minMemory: 41,
        minVcpu: 6,
      },
    });
  });

  it('templates: create_template, runpodctl port labels (portsConfig with string ports), listings without duplicates', async () => {
    const name = `mgmt-tpl-${suffix()}`;
    // runpod-python create_template, its literal as it builds it (note `containerRegistryAuthId :`).
    const created = data(
      await gql(
        `mutation { saveTemplate( input: { name: ${lit(name)}, imageName: "runpod/stack", dockerArgs: "python3 main.py", containerDiskInGb: 10, volumeInGb: 0, ports: "8888/http,22/tcp", env: [{ key: "A", value: "1" }], isServerless: false, containerRegistryAuthId : "", startSsh: true, isPublic: false, readme: "" } ) { id name imageName dockerArgs containerDiskInGb volumeInGb volumeMountPath ports env { key value } isServerless } }`,
      ),
      'saveTemplate',
    );
    expect(created).toMatchObject({
      name,
      dockerArgs: 'python3 main.py',
      ports: '8888/http,22/tcp',
      env: [{ key: 'A', value: '1' }],
    });
    // runpodctl template create --port-labels: read the save state, write it back with labels.
    const state = data(
      await gql(
        'query GetTemplateForPortLabels { myself { podTemplates { id name imageName dockerArgs env { key value } ports volumeMountPath volumeInGb containerDiskInGb containerRegistryAuthId startJupyter startSsh startScript isServerless isPublic readme advancedStart category } } }',
      ),
      'myself',
    ).podTemplates.find((p: { id: string }) => p.id === created.id);
    expect(state).toMatchObject({ startScript: '', advancedStart: false, category: 'NVIDIA' });
    data(
      await gql(
        'mutation UpdateTemplatePortLabels($input: SaveTemplateInput) { saveTemplate(input: $input) { id } }',
        {
          input: {
            ...state,
            ports: state.ports,
            portsConfig: [{ port: '8888', name: 'Jupyter' }],
          },
        },
      ),
      'saveTemplate',
    );
    const got = data(
      await gql(
        'query GetTemplate($id: String!) { podTemplate(id: $id) { id name imageName isServerless isPublic isRunpod category ports portsConfig { port name } env { key value } containerDiskInGb containerRegistryAuthId volumeInGb volumeMountPath readme } }',
        { id: created.id },
      ),
      'podTemplate',
    );
    expect(got.portsConfig).toEqual([{ port: '8888', name: 'Jupyter' }]);
    expect((await rest('GET', `/templates/${created.id}`)).body.portsConfig).toEqual(
      got.portsConfig,
    );
    // runpodctl template list --all: official + community (GraphQL) + own (REST), each once.
    const other = await newUserKey('readwrite');
    const shared = await rest(
      'POST',
      '/templates',
      { name: `mgmt-public-${suffix()}`, imageName: 'x:1', isPublic: true },
      other,
    );
    const list = `query PodTemplates($input: PodTemplateInput) { podTemplates(input: $input) { id name imageName isServerless isPublic isRunpod category containerDiskInGb volumeInGb volumeMountPath } }`;
    const official = data(await gql(list, { input: { isRunpod: true } }), 'podTemplates');
    const community = data(await gql(list, { input: { isRunpod: false } }), 'podTemplates');
    const own = (await rest('GET', '/templates')).body;
    const ids = [...official, ...community, ...own].map((x: { id: string }) => x.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining([created.id, shared.body.id]));
  });
}
