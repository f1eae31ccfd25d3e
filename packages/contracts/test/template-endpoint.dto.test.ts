import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import {
  EndpointCreateDto,
  EndpointUpdateDto,
  TemplateCreateDto,
  TemplateUpdateDto,
} from '../src/index.js';

const errorsOf = (cls: new () => object, body: unknown) =>
  validateSync(plainToInstance(cls, body as object)).map((e) => ({
    path: e.property,
    messages: Object.values(e.constraints ?? {}),
  }));
const pathsOf = (cls: new () => object, body: unknown) => errorsOf(cls, body).map((e) => e.path);

describe('template and endpoint DTOs (RunPod REST v1 fields)', () => {
  it('TemplateCreateDto requires name and imageName although the update DTO it extends does not', () => {
    expect(pathsOf(TemplateCreateDto, {})).toEqual(expect.arrayContaining(['name', 'imageName']));
    expect(pathsOf(TemplateCreateDto, { name: 'a', imageName: 'img:1' })).toEqual([]);
    expect(pathsOf(TemplateUpdateDto, {})).toEqual([]);
  });

  it('EndpointCreateDto requires templateId; the update DTO does not', () => {
    expect(pathsOf(EndpointCreateDto, { workersMax: 1 })).toEqual(['templateId']);
    expect(pathsOf(EndpointCreateDto, { templateId: 't' })).toEqual([]);
    expect(pathsOf(EndpointUpdateDto, { workersMax: 1 })).toEqual([]);
  });

  it.each([
    [{ env: ['A=1'] }],
    [{ env: 'A=1' }],
    [{ env: { A: 1 } }],
    [{ env: { A: null } }],
    [{ env: { '': 'x' } }],
    [{ env: { 'A=B': 'x' } }],
  ])('rejects the env map %j', (body) => {
    expect(pathsOf(TemplateUpdateDto, body)).toEqual(['env']);
  });

  it('names the offending env entry and accepts string maps, empty values included', () => {
    expect(errorsOf(TemplateUpdateDto, { env: { OK: 'y', BAD: 2 } })[0].messages.join()).toContain(
      'env.BAD',
    );
    expect(pathsOf(TemplateUpdateDto, { env: { A: '', B: '{{ RUNPOD_SECRET_x }}' } })).toEqual([]);
  });
});
