<?php

declare(strict_types=1);

use Kiln\App\App;
use Kiln\Http\Request;
use Kiln\Http\UploadedFile;

$app = new App();

// Describes what the upload parsed into: fields as given, each file's size, md5, name and temp path.
$app->post('/upload', function (Request $request): array {
    $files = [];
    $describe = static function (array $tree, string $prefix) use (&$describe, &$files): void {
        foreach ($tree as $key => $node) {
            $name = $prefix === '' ? (string) $key : "{$prefix}[$key]";
            if ($node instanceof UploadedFile) {
                $files[$name] = [
                    'client' => $node->clientFilename(),
                    'type' => $node->clientMediaType(),
                    'error' => $node->error(),
                    'size' => $node->size(),
                    'md5' => $node->isOk() ? md5_file($node->path()) : null,
                    'path' => $node->isOk() ? $node->path() : null,
                ];
            } elseif (is_array($node)) {
                $describe($node, $name);
            }
        }
    };
    $describe($request->files(), '');
    return ['fields' => $request->parsedBody(), 'files' => $files, 'spooled' => $request->isBodySpooled()];
});

$app->get('/ping', fn() => 'pong');

return $app;
