import type { PortLabel, Template } from '@runplane/contracts';
import type { Template as TemplateRow } from '../generated/prisma/client.js';

/** A stored template as REST v1 shows it; the owner stays internal. */
export function toTemplate(row: TemplateRow): Template {
  return {
    id: row.id,
    name: row.name,
    imageName: row.imageName,
    category: row.category,
    containerDiskInGb: row.containerDiskInGb,
    containerRegistryAuthId: row.containerRegistryAuthId,
    dockerEntrypoint: row.dockerEntrypoint,
    dockerStartCmd: row.dockerStartCmd,
    // Marketplace and official templates do not exist here: nothing is earned, nothing is RunPod's.
    earned: 0,
    env: row.env as Record<string, string>,
    isPublic: row.isPublic,
    isRunpod: false,
    isServerless: row.isServerless,
    ports: row.ports,
    portsConfig: row.portsConfig as unknown as PortLabel[],
    readme: row.readme,
    runtimeInMin: 0,
    volumeInGb: row.volumeInGb,
    volumeMountPath: row.volumeMountPath,
  };
}
