import { expect, it } from '@jest/globals';
import { lit, SLEEPER, type ManagementClient } from './management-client.js';

/** Endpoints, Pods and errors through the management API (see describeManagementApi). */
export function workloadTests({
  gql,
  data,
  gqlError,
  rest,
  newUserKey,
  suffix,
}: ManagementClient): void {
  it('endpoints: create_endpoint, get_endpoints, update_endpoint_template, runpodctl create with inline template, deleteEndpoint', async () => {
    const tpl = (
      await rest('POST', '/templates', {
        name: `mgmt-sls-${suffix()}`,
        imageName: 'w:1',
        isServerless: true,
        dockerStartCmd: ['true'],
      })
    ).body;
    const name = `mgmt-ep-${suffix()}`;
    // runpod-python create_endpoint(flashboot=True, allowed_cuda_versions="12.4"): its literal.
    const created = data(
      await gql(
        `mutation { saveEndpoint( input: { flashBootType: FLASHBOOT, name: ${lit(name)}, templateId: ${lit(tpl.id)}, gpuIds: "AMPERE_16", networkVolumeId: "", locations: "", idleTimeout: 7, scalerType: "QUEUE_DELAY", scalerValue: 4, workersMin: 0, workersMax: 2, allowedCudaVersions: "12.4", gpuCount: 1 } ) { id name templateId gpuIds networkVolumeId locations idleTimeout scalerType scalerValue workersMin workersMax allowedCudaVersions gpuCount flashBootType } }`,
      ),
      'saveEndpoint',
    );
    expect(created).toMatchObject({
      name,
      templateId: tpl.id,
      gpuIds: 'AMPERE_16',
      networkVolumeId: null,
      locations: '',
      idleTimeout: 7,
      workersMax: 2,
      gpuCount: 1,
    });
    const viaRest = (await rest('GET', `/endpoints/${created.id}`)).body;
    expect(viaRest).toMatchObject({
      name,
      templateId: tpl.id,
      gpuTypeIds: ['NVIDIA RTX A4000'],
      idleTimeout: 7,
      workersMax: 2,
    });
    // runpod-python get_endpoints (QUERY_ENDPOINT), verbatim.
    const listed = data(
      await gql(
        'query Query { myself { endpoints { aiKey gpuIds id idleTimeout name networkVolumeId locations scalerType scalerValue templateId type userId version workersMax workersMin workersStandby gpuCount env { key value } createdAt networkVolume { id dataCenterId } } } }',
      ),
      'myself',
    ).endpoints.find((e: { id: string }) => e.id === created.id);
    expect(listed).toMatchObject({
      id: created.id,
      type: 'QB',
      version: viaRest.version,
      userId: viaRest.userId,
      createdAt: viaRest.createdAt,
      networkVolume: null,
    });
    // runpod-python update_endpoint_template and runpodctl's typed variant.
    const tpl2 = (
      await rest('POST', '/templates', {
        name: `mgmt-sls2-${suffix()}`,
        imageName: 'w:2',
        isServerless: true,
      })
    ).body;
    const moved = data(
      await gql(
        `mutation { updateEndpointTemplate(input: {templateId: ${lit(tpl2.id)}, endpointId: ${lit(created.id)}}) { id templateId } }`,
      ),
      'updateEndpointTemplate',
    );
    expect(moved).toEqual({ id: created.id, templateId: tpl2.id });
    expect((await rest('GET', `/endpoints/${created.id}`)).body.templateId).toBe(tpl2.id);
    data(
      await gql(
        'mutation Mutation($input: UpdateEndpointTemplateInput) { updateEndpointTemplate(input: $input) { id templateId } }',
        { input: { endpointId: created.id, templateId: tpl.id } },
      ),
      'updateEndpointTemplate',
    );
    // saveEndpoint with id changes the fields given.
    const modified = data(
      await gql(
        'mutation SaveEndpoint($input: EndpointInput!) { saveEndpoint(input: $input) { id workersMax gpuIds templateId } }',
        { input: { id: created.id, workersMax: 5, gpuIds: 'NVIDIA A100-SXM4-80GB' } },
      ),
      'saveEndpoint',
    );
    expect(modified).toEqual({
      id: created.id,
      workersMax: 5,
      gpuIds: 'NVIDIA A100-SXM4-80GB',
      templateId: tpl.id,
    });
    // runpodctl serverless create (hub): an inline template, networkVolumeIds objects, flashBootType as a variable.
    const inline = data(
      await gql(
        'mutation SaveEndpoint($input: EndpointInput!) { saveEndpoint(input: $input) { id name templateId gpuIds instanceIds computeType networkVolumeId networkVolumeIds { networkVolumeId dataCenterId } locations idleTimeout scalerType scalerValue workersMin workersMax gpuCount minCudaVersion executionTimeoutMs flashBootType modelReferences } }',
        {
          input: {
            name: `mgmt-hub-${suffix()}`,
            template: {
              name: `mgmt-hub-tpl-${suffix()}`,
              imageName: 'hub/worker:1',
              containerDiskInGb: 20,
              dockerArgs: '',
              env: [{ key: 'MODE', value: 'hub' }],
            },
            gpuIds: 'ADA_24',
            workersMax: 1,
            flashBootType: 'OFF',
            executionTimeoutMs: 600000,
            networkVolumeIds: [],
          },
        },
      ),
      'saveEndpoint',
    );
    expect(inline).toMatchObject({
      gpuIds: 'ADA_24',
      computeType: 'GPU',
      workersMax: 1,
      flashBootType: 'OFF',
      modelReferences: [],
    });
    expect((await rest('GET', `/templates/${inline.templateId}`)).body).toMatchObject({
      imageName: 'hub/worker:1',
      isServerless: true,
      env: { MODE: 'hub' },
    });
    // A GPU name that is neither a pool nor a type: runpodctl and python print errors[0].message.
    const bad = gqlError(
      await gql(
        `mutation { saveEndpoint(input: {name: "x", templateId: ${lit(tpl.id)}, gpuIds: "AMPERE_7"}) { id } }`,
      ),
      'saveEndpoint',
      'BAD_USER_INPUT',
    );
    expect(bad).toContain('AMPERE_7');
    // deleteEndpoint(id: String!) (flash, pulumi) answers null; then REST says 404.
    for (const id of [created.id, inline.id]) {
      expect(
        data(
          await gql('mutation deleteEndpoint($id: String!) { deleteEndpoint(id: $id) }', { id }),
          'deleteEndpoint',
        ),
      ).toBeNull();
      expect((await rest('GET', `/endpoints/${id}`)).status).toBe(404);
    }
  });

  it('pods: create_pod (GPU and CPU), get_pod, get_pods, stop, resume, terminate; runpodctl create and legacy commands', async () => {
    // runpod-python create_pod(name, image, gpu, docker_args=..., ports=..., env=...): its literal.
    const pod = data(
      await gql(
        `mutation { podFindAndDeployOnDemand( input: { name: "mgmt-gpu", imageName: "runpod/stack", cloudType: ALL, startSsh: true, gpuTypeId: "NVIDIA GeForce RTX 4090", supportPublicIp: true, gpuCount: 1, volumeInGb: 0, minVcpuCount: 1, minMemoryInGb: 1, dataCenterId: null, dockerArgs: ${lit(SLEEPER)}, containerDiskInGb: 10, ports: "8888/http,22/tcp", volumeMountPath: "/runpod-volume", env: [{ key: "A", value: "b c" }] } ) { id imageName env machineId machine { podHostId } } }`,
      ),
      'podFindAndDeployOnDemand',
    );
    expect(pod).toMatchObject({
      imageName: 'runpod/stack',
      env: ['A=b c'],
      machine: { podHostId: pod.id },
    });
    const fields =
      'id containerDiskInGb costPerHr desiredStatus dockerArgs dockerId env gpuCount imageName lastStatusChange machineId memoryInGb name podType port ports uptimeSeconds vcpuCount volumeInGb volumeMountPath runtime { ports{ ip isIpPublic privatePort publicPort type } } machine { gpuDisplayName }';
    const got = data(
      await gql(`query pod { pod(input: {podId: ${lit(pod.id)}}) { ${fields} } }`),
      'pod',
    );
    const viaRest = (await rest('GET', `/pods/${pod.id}`)).body;
    expect(got).toMatchObject({
      desiredStatus: 'RUNNING',
      dockerArgs: SLEEPER,
      costPerHr: viaRest.costPerHr,
      gpuCount: 1,
      ports: '8888/http,22/tcp',
      podType: 'RESERVED',
      machine: { gpuDisplayName: 'RTX 4090' },
    });
    expect(got.runtime.ports).toContainEqual({
      ip: viaRest.publicIp,
      isIpPublic: true,
      privatePort: 22,
      publicPort: viaRest.portMappings['22'],
      type: 'tcp',
    });
    // runpod-python get_pods (QUERY_POD) and runpodctl's legacy query with its `PortType: type` alias.
    const mine = data(await gql(`query myPods { myself { pods { ${fields} } } }`), 'myself').pods;
    expect(mine.map((p: { id: string }) => p.id)).toContain(pod.id);
    const legacy = data(
      await gql(
        'query myPods { myself { pods { id desiredStatus machine { gpuDisplayName location } runtime { ports { ip isIpPublic privatePort publicPort PortType: type } } } } }',
        {},
      ),
      'myself',
    );
    expect(legacy.pods.find((p: { id: string }) => p.id === pod.id).runtime.ports).toContainEqual(
      expect.objectContaining({ PortType: 'http', privatePort: 8888 }),
    );
    // stop_pod, resume_pod(pod_id, 1): python's literals; REST sees each state.
    expect(
      data(
        await gql(`mutation { podStop(input: { podId: ${lit(pod.id)} }) { id desiredStatus } }`),
        'podStop',
      ),
    ).toEqual({ id: pod.id, desiredStatus: 'EXITED' });
    expect((await rest('GET', `/pods/${pod.id}`)).body.desiredStatus).toBe('EXITED');
    const resumed = data(
      await gql(
        `mutation { podResume(input: { podId: ${lit(pod.id)}, gpuCount: 1 }) { id desiredStatus imageName env machineId machine { podHostId } } }`,
      ),
      'podResume',
    );
    expect(resumed).toMatchObject({ id: pod.id, desiredStatus: 'RUNNING' });
    // runpodctl (legacy) stop with a `$podId: String!` variable inside the input object.
    expect(
      data(
        await gql(
          'mutation stopPod($podId: String!) { podStop(input: {podId: $podId}) { id desiredStatus lastStatusChange } }',
          { podId: pod.id },
        ),
        'podStop',
      ),
    ).toMatchObject({ desiredStatus: 'EXITED' });
    expect(
      data(
        await gql(`mutation { podTerminate(input: { podId: ${lit(pod.id)} }) }`),
        'podTerminate',
      ),
    ).toBeNull();
    expect((await rest('GET', `/pods/${pod.id}`)).status).toBe(404);

    // runpodctl pod create (GPU): typed variables, fields it always sends (stopAfter, compliance...).
    const ctl = data(
      await gql(
        'mutation createPod($input: PodFindAndDeployOnDemandInput!) { podFindAndDeployOnDemand(input: $input) { id name imageName desiredStatus costPerHr containerDiskInGb volumeInGb volumeMountPath gpuCount memoryInGb vcpuCount ports lastStatusChange env machine { gpuDisplayName location } } }',
        {
          input: {
            cloudType: 'SECURE',
            containerDiskInGb: 20,
            gpuCount: 2,
            gpuTypeId: 'NVIDIA L4',
            imageName: 'runpod/stack',
            name: 'mgmt-ctl',
            startSsh: true,
            volumeInGb: 0,
            volumeMountPath: '/workspace',
            dockerArgs: SLEEPER,
            ports: '22/tcp',
            env: [{ key: 'K', value: 'v' }],
            stopAfter: '2030-01-01T00:00:00Z',
            compliance: ['GDPR'],
            countryCode: 'DE',
            minCudaVersion: '12.6',
          },
        },
      ),
      'podFindAndDeployOnDemand',
    );
    expect(ctl).toMatchObject({
      name: 'mgmt-ctl',
      gpuCount: 2,
      costPerHr: 0.86,
      vcpuCount: 24,
      memoryInGb: 100,
      env: ['K=v'],
      machine: { gpuDisplayName: 'L4' },
    });
    expect(
      data(
        await gql(
          'mutation terminatePod($podId: String!) { podTerminate(input: {podId: $podId}) }',
          { podId: ctl.id },
        ),
        'podTerminate',
      ),
    ).toBeNull();

    // runpod-python create_pod without a GPU: deployCpuPod, templateId "runpod-ubuntu", instanceId.
    const volume = (
      await rest('POST', '/networkvolumes', {
        name: 'cpu-data',
        size: 10,
        dataCenterId: 'LOCAL-1',
      })
    ).body;
    const cpu = data(
      await gql(
        `mutation { deployCpuPod( input: { name: "mgmt-cpu", imageName: "runpod/stack", cloudType: ALL, startSsh: true, instanceId: "cpu3c-2-4", dataCenterId: null, dockerArgs: ${lit(SLEEPER)}, containerDiskInGb: 10, volumeMountPath: "/runpod-volume", templateId: "runpod-ubuntu", networkVolumeId: ${lit(volume.id)} } ) { id imageName env machineId machine { podHostId } } }`,
      ),
      'deployCpuPod',
    );
    const cpuRest = (await rest('GET', `/pods/${cpu.id}?includeNetworkVolume=true`)).body;
    expect(cpuRest).toMatchObject({
      cpuFlavorId: 'cpu3c',
      vcpuCount: 2,
      gpuCount: 0,
      templateId: null,
      networkVolume: volume,
    });
    expect((await rest('DELETE', `/networkvolumes/${volume.id}`)).status).toBe(409);
    data(await gql(`mutation { podTerminate(input: { podId: ${lit(cpu.id)} }) }`), 'podTerminate');
    expect((await rest('DELETE', `/networkvolumes/${volume.id}`)).status).toBe(204);
  });

  it("errors as the clients read them: errors[0].message, another user's objects NOT_FOUND, readonly keys 401", async () => {
    const missing = gqlError(
      await gql('query pod { pod(input: {podId: "nopodhere"}) { id } }'),
      'pod',
      'NOT_FOUND',
    );
    expect(missing).toContain('nopodhere');
    gqlError(await gql('mutation { podStop(input: {}) { id } }'), 'podStop', 'BAD_USER_INPUT');
    const noImage = gqlError(
      await gql(
        'mutation { podFindAndDeployOnDemand(input: {name: "x", gpuTypeId: "NVIDIA L4"}) { id } }',
      ),
      'podFindAndDeployOnDemand',
      'BAD_USER_INPUT',
    );
    expect(noImage).toContain('image');
    const pod = (await rest('POST', '/pods', { imageName: 'x:1', dockerArgs: SLEEPER })).body;
    const other = await newUserKey('readwrite');
    gqlError(
      await gql(`mutation { podTerminate(input: { podId: ${lit(pod.id)} }) }`, undefined, other),
      'podTerminate',
      'NOT_FOUND',
    );
    const readonly = await newUserKey('readonly');
    const denied = await gql(
      'mutation { updateUserSettings(input: {pubKey: ""}) { id } }',
      undefined,
      readonly,
    );
    expect(denied.status).toBe(401);
    expect(denied.body.errors[0].message).toEqual(expect.any(String));
    expect((await rest('DELETE', `/pods/${pod.id}`)).status).toBe(204);
  });
}
