<?php

declare(strict_types=1);

throw new LogicException('a file in a private directory must never be loaded');
