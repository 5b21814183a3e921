"""An in-memory stand-in for the docker SDK client used by the driver."""

import collections
import datetime
import fnmatch
import hashlib
import io
import itertools
import json
import tarfile

import docker.errors

_ids = itertools.count(1)

SavedImage = collections.namedtuple('SavedImage', ['tarball', 'content_id'])


def tarball(entries):
    """A tar archive of (name, bytes) entries.

    A name ending in / is a directory, a value ('->', target) a symlink.
    """
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode='w', format=tarfile.PAX_FORMAT) as tar:
        for name, data in entries:
            info = tarfile.TarInfo(name.rstrip('/'))
            if name.endswith('/'):
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            elif isinstance(data, tuple):
                info.type = tarfile.SYMTYPE
                info.linkname = data[1]
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def saved_image(files=None, repo_tags=None):
    """A one-layer image as Docker 20.10's ``docker save`` writes it.

    ``files``: {path: bytes} of the layer (default: ``owner`` holding
    ``A``); ``repo_tags``: the names it carries (manifest.json's RepoTags
    and the legacy repositories file). The content id is the digest of its
    config, as the engine computes it.
    """
    layer = tarball(sorted((files or {'owner': b'A'}).items()))
    diff_id = 'sha256:' + hashlib.sha256(layer).hexdigest()
    config = json.dumps({'architecture': 'amd64', 'os': 'linux',
                         'config': {'Cmd': ['/bin/sh']},
                         'rootfs': {'type': 'layers',
                                    'diff_ids': [diff_id]}},
                        sort_keys=True).encode()
    config_hex = hashlib.sha256(config).hexdigest()
    v1_id = hashlib.sha256(diff_id.encode()).hexdigest()
    entries = [('%s.json' % config_hex, config), (v1_id + '/', None),
               (v1_id + '/VERSION', b'1.0'), (v1_id + '/json', b'{}'),
               (v1_id + '/layer.tar', layer),
               ('manifest.json', json.dumps([{
                   'Config': '%s.json' % config_hex,
                   'RepoTags': repo_tags,
                   'Layers': [v1_id + '/layer.tar']}]).encode())]
    if repo_tags:
        repositories = collections.defaultdict(dict)
        for ref in repo_tags:
            name, tag = ref.rsplit(':', 1)
            repositories[name][tag] = v1_id
        entries.append(('repositories', json.dumps(repositories).encode()))
    return SavedImage(tarball(entries), 'sha256:' + config_hex)


def netns_of(pid):
    """The SandboxKey a container started with this PID gets here."""
    return '/var/run/docker/netns/%012x' % pid


def docker_time(seconds):
    """A Docker RFC 3339 time (nanoseconds) of seconds since the epoch."""
    moment = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)
    return moment.strftime('%Y-%m-%dT%H:%M:%S.%f') + '123Z'


class FakeImage(object):
    def __init__(self, client, image_id):
        self.client = client
        self.id = image_id

    @property
    def tags(self):
        return sorted(r for r, i in self.client.images.tags.items()
                      if i == self.id)

    @property
    def attrs(self):
        """docker inspect: LastTagTime is the image's, not per tag."""
        tagged = self.client.images.tag_times.get(self.id)
        return {'Id': self.id, 'RepoTags': self.tags,
                'Metadata': {'LastTagTime': docker_time(tagged)
                             if tagged is not None
                             else '0001-01-01T00:00:00Z'}}

    def tag(self, repository, tag):
        images = self.client.images
        images.known.add(self.id)
        images.tags['%s:%s' % (repository, tag)] = self.id
        images.tag_times[self.id] = images.now
        images.tagged.append('%s:%s' % (repository, tag))
        return True


class FakeImages(object):
    def __init__(self, client):
        self.client = client
        self.tags = {}
        self.known = set()          # image ids, tagged or not
        self.loads = []
        self.now = 1767225600.0     # 2026-01-01: when tag() happens
        self.tag_times = {}         # image id -> seconds of the last tag
        self.tagged = []            # references tag() set, in order
        self.refuse = {}            # reference -> error remove() raises

    def exists(self, image_id):
        return image_id in self.known or image_id in self.tags.values()

    def get(self, ref):
        """By reference, else by id (as the engine resolves a name)."""
        if ref in self.tags:
            return FakeImage(self.client, self.tags[ref])
        if self.exists(ref):
            return FakeImage(self.client, ref)
        raise docker.errors.ImageNotFound(ref)

    def list(self, name=None, all=False, filters=None):
        """One image per id with all its tags, as the docker SDK lists.

        The ``reference`` filter matches the repository (shell pattern).
        """
        pattern = (filters or {}).get('reference') or name or '*'
        ids = sorted({i for r, i in self.tags.items()
                      if fnmatch.fnmatchcase(r.rsplit(':', 1)[0], pattern)})
        return [FakeImage(self.client, i) for i in ids]

    def load(self, data):
        """docker load as Docker 20.10 does it.

        The id of an image is the digest of its config; the names in
        manifest.json's RepoTags are applied, moving a tag another image
        had. The SDK returns the images by the names the engine printed:
        the tags, or the ids when the (last) image had none.
        """
        blob = b''.join(data) if not isinstance(data, bytes) else data
        self.loads.append(blob)
        with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
            try:
                manifest = json.load(tar.extractfile('manifest.json'))
            except KeyError:
                # a legacy load, which needs the repositories file
                raise docker.errors.ImageLoadError(
                    'open /var/lib/docker/tmp/docker-import-1/repositories: '
                    'no such file or directory')
            printed, ids, tagged = [], [], 0
            for item in manifest:
                config = tar.extractfile(item['Config']).read()
                image_id = 'sha256:' + hashlib.sha256(config).hexdigest()
                self.known.add(image_id)
                ids.append(image_id)
                tagged = 0
                for ref in item.get('RepoTags') or []:
                    self.tags[ref] = image_id
                    printed.append(ref)
                    tagged += 1
        if not tagged:
            printed += ids
        return [self.get(name) for name in printed]

    def remove(self, ref, noprune=False):
        """docker rmi: a tag (the image with its last one), or an id."""
        if ref in self.refuse:
            raise self.refuse[ref]
        if ref not in self.tags and not self.exists(ref):
            raise docker.errors.ImageNotFound(ref)
        image_id = self.tags.get(ref, ref)
        refs = [r for r, i in self.tags.items() if i == image_id]
        users = [c['Name'] for c in self.client.api.store.values()
                 if self.client.api.image_id(c) == image_id]
        if ref in self.tags:
            if refs == [ref] and users:
                # as the engine answers (409) for the last tag of an image
                # that a container uses
                self._conflict(
                    'unable to remove repository reference "%s" (must '
                    'force) - container %s is using its referenced image'
                    % (ref, users[0][1:]))
            del self.tags[ref]
            if refs != [ref]:
                return      # only untagged
        elif len(refs) > 1 or users:
            self._conflict('unable to delete %s (must be forced) - image is '
                           'referenced in multiple repositories or used by a '
                           'container' % ref)
        elif refs:
            del self.tags[refs[0]]
        self.known.discard(image_id)
        self.tag_times.pop(image_id, None)

    @staticmethod
    def _conflict(message):
        message = 'conflict: ' + message
        raise docker.errors.APIError(message, response=Response(409),
                                     explanation=message)


class Response(object):
    """The part of a requests response docker.errors.APIError reads."""

    def __init__(self, status_code):
        self.status_code = status_code
        self.reason = 'Conflict' if status_code == 409 else ''
        self.url = 'http+docker://localhost/images'


class FakeContainers(object):
    def __init__(self, client):
        self.client = client

    def create(self, image=None, name=None, labels=None, mounts=(),
               **kwargs):
        api = self.client.api
        if not self.client.images.exists(self.client.images.tags.get(
                image, image)):
            raise docker.errors.ImageNotFound('No such image: %s' % image)
        if name in api.store:
            raise docker.errors.APIError('Conflict: %s' % name)
        if kwargs.get('storage_opt') and api.refuse_storage_opt:
            api.calls.append(('create refused', name))
            raise docker.errors.APIError(
                '500 Server Error: Internal Server Error ("--storage-opt is '
                'supported only for overlay over xfs with \'pquota\' mount '
                'option")')
        cid = 'c%d' % next(_ids)
        layers = '/var/lib/docker/overlay2/%s' % cid
        api.store[name] = {
            'Id': cid, 'Name': '/' + name,
            'Config': {'Image': image, 'Labels': labels or {}},
            # resolved once, at create: the tag may go, the image stays
            'ImageID': self.client.images.tags.get(image, image),
            'HostConfig': kwargs,
            'State': {'Status': 'created', 'Running': False,
                      'Paused': False, 'Pid': 0, 'ExitCode': 0,
                      'StartedAt': '0001-01-01T00:00:00Z'},
            'GraphDriver': {'Name': api.storage_driver, 'Data': {
                'LowerDir': '%s-init/diff:/var/lib/docker/overlay2/'
                            'image/diff' % layers,
                'UpperDir': layers + '/diff',
                'WorkDir': layers + '/work',
                'MergedDir': layers + '/merged'}},
            'Mounts': [api.anonymous_volume(name, m) for m in mounts],
            'files': {}, 'logs': []}
        api.calls.append(('create', name))


class FakeAPI(object):
    def __init__(self, client=None):
        self.client = client
        self.store = {}
        self.calls = []
        self.exit_on_start = False
        self.ignore_sigterm = False
        self.pids = itertools.count(100)
        self.clock = itertools.count(1)
        self.storage_driver = 'overlay2'
        self.refuse_storage_opt = False     # an XFS without pquota
        # the engine's networks (an engine started with "bridge": "none" has these)
        self.network_list = [{'Name': 'host', 'Driver': 'host'},
                             {'Name': 'none', 'Driver': 'null'}]
        self.volumes = {}       # name -> (container name, Mount)

    def anonymous_volume(self, container, mount):
        """A Mounts entry of docker inspect for a --mount without source."""
        name = 'v%d' % next(_ids)
        self.volumes[name] = (container, mount)
        return {'Type': 'volume', 'Name': name, 'Driver': 'local',
                'Source': '/nonexistent/volumes/%s/_data' % name,
                'Destination': mount['Target'], 'RW': True}

    def remove_volume(self, name):
        if name not in self.volumes:
            raise docker.errors.NotFound(name)
        self.calls.append(('remove_volume', name))
        del self.volumes[name]

    def _get(self, name):
        if name in self.store:
            return self.store[name]
        for c in self.store.values():   # by id
            if c['Id'] == name:
                return c
        raise docker.errors.NotFound(name)

    def networks(self):
        return list(self.network_list)

    def tag(self, image, repository, tag=None, force=False):
        return self.client.images.get(image).tag(repository, tag)

    def inspect_container(self, name):
        return self._get(name)

    def image_id(self, c):
        """The id of a container's image, as the engine resolved it."""
        return c.get('ImageID') or self.client.images.tags.get(
            c['Config']['Image'], c['Config']['Image'])

    def containers(self, all=False, filters=None):
        wanted = dict(f.split('=', 1) for f in (filters or {}).get(
            'label', []))
        out = []
        for c in self.store.values():
            labels = c['Config']['Labels']
            if not [k for k, v in wanted.items() if labels.get(k) != v]:
                out.append({'Id': c['Id'], 'Names': [c['Name']],
                            'Image': c['Config']['Image'],
                            'ImageID': self.image_id(c),
                            'Labels': labels})
        return out

    def start(self, name):
        c = self._get(name)
        self.calls.append(('start', name))
        tick = next(self.clock)
        c['State'].update(StartedAt='2026-01-01T00:00:%02d.5Z' % tick)
        c['tick'] = tick
        # as in Docker, StartedAt is recorded after the process started: its
        # first line can carry an earlier timestamp
        c['logs'].append((tick + 0.4, b'boot %d\n' % tick))
        if self.exit_on_start:
            c['State'].update(Status='exited', Running=False, Pid=0,
                              ExitCode=1)
        else:
            pid = next(self.pids)
            c['State'].update(Status='running', Running=True, Pid=pid,
                              ExitCode=0)
            c['NetworkSettings'] = {'SandboxKey': netns_of(pid)}

    def _down(self, c, code):
        # Docker destroys the netns with the container's last process
        c['NetworkSettings'] = {'SandboxKey': ''}
        c['State'].update(Status='exited', Running=False, Paused=False,
                          Pid=0, ExitCode=code,
                          FinishedAt='2026-01-01T00:00:%02d.7Z'
                          % c.get('tick', 0))

    def stop(self, name, timeout=10):
        self.calls.append(('stop', name, timeout))
        self._down(self._get(name), 137 if self.ignore_sigterm else 0)

    def kill(self, name):
        self.calls.append(('kill', name))
        self._down(self._get(name), 137)

    def wait(self, name, condition=None, timeout=None):
        self.calls.append(('wait', name, condition))
        return {'StatusCode': self._get(name)['State']['ExitCode']}

    def pause(self, name):
        c = self._get(name)
        self.calls.append(('pause', name))
        c['State'].update(Status='paused', Paused=True)

    def unpause(self, name):
        c = self._get(name)
        self.calls.append(('unpause', name))
        c['State'].update(Status='running', Paused=False)

    def put_archive(self, name, path, data):
        c = self._get(name)
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            for m in tar.getmembers():
                if m.isfile():
                    c['files'][m.name] = (m.mode,
                                          tar.extractfile(m).read())
        return True

    def logs(self, name, stdout=True, stderr=True, since=None, tail=None):
        c = self._get(name)
        return b''.join(line for t, line in c['logs']
                        if since is None or t >= since % 60)

    def remove_container(self, name, v=False, force=False):
        c = self._get(name)
        self.calls.append(('remove', name))
        del self.store[name]
        if v:
            for m in c['Mounts']:
                self.volumes.pop(m['Name'], None)


class FakeDockerClient(object):
    def __init__(self):
        self.api = FakeAPI(self)
        self.images = FakeImages(self)
        self.containers = FakeContainers(self)
        self.info_data = {'NCPU': 4, 'MemTotal': 8 * 1024 ** 3,
                          'DockerRootDir': '/', 'ServerVersion': '20.10.24'}
        self.reachable = True

    def ping(self):
        if not self.reachable:
            raise docker.errors.DockerException('connection refused')
        return True

    def version(self):
        return {'Version': '20.10.24', 'ApiVersion': '1.41'}

    def info(self):
        return dict(self.info_data, Driver=self.api.storage_driver)

    def close(self):
        pass
