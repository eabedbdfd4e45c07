<?php
putenv('DEV_FIXTURE_RUN=' . uniqid());
echo 'putenv';
