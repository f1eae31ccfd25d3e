import preset from '../../jest.preset.js';

// The database code must not depend on the machine's time zone (Prisma stores DateTime as UTC
// wall-clock; drivers read `timestamp` as local time): its tests run away from UTC. Set here so
// that the test processes start with it (a test cannot change its own process's zone).
process.env.TZ = 'America/New_York';

export default { ...preset };
