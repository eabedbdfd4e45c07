<?php

declare(strict_types=1);

/**
 * A document root whose scripts are not run but described: the runner answers with the Script it was
 * given and the CGI params a tier would pass, as JSON. Lets the document-root layer be tested on real
 * sockets without any PHP tier. The root comes from DOCROOT_ECHO_ROOT; DOCROOT_ECHO_FRONT=off turns the
 * front controller off.
 */

use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Http\StaticFiles;
use Kiln\Site\CgiParams;
use Kiln\Site\DocumentRoot;
use Kiln\Site\PathResolver;
use Kiln\Site\Script;
use Kiln\Site\ScriptRunner;
use Kiln\Site\TierMap;

$root = (string) getenv('DOCROOT_ECHO_ROOT');
$front = getenv('DOCROOT_ECHO_FRONT') === 'off' ? null : '/index.php';

$echo = new class implements ScriptRunner {
    public function run(Request $request, Script $script): Response
    {
        return Response::json([
            'filename' => $script->filename,
            'scriptName' => $script->scriptName,
            'pathInfo' => $script->pathInfo,
            'documentRoot' => $script->documentRoot,
            'params' => CgiParams::build($request, $script),
        ]);
    }
};

return new DocumentRoot(new PathResolver($root, $front), new TierMap($echo), new StaticFiles($root));
